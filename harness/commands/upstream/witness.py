"""The witness run: the smallest corpus case an entry matches on its backend, run on every installed
implementation (each in its own workers, as `convdiff run` runs them), under the settings the snippet makes.

The reported implementation's output is kept beside the others', so that each other implementation is
classified as giving the right values, the same wrong values, other wrong values, a refusal or a crash
(reports/upstream/others.py). Several roots' witnesses run in one pass per settings, so an `--all` keeps
every framework's workers warm across them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from backends.registry import installed_backends
from harness.commands.upstream.contract import entry_backends, installed
from harness.commands.upstream.scripts import environ
from harness.execution.records import Record
from harness.judge.known_issues import KnownIssue, KnownIssues, project_known_issues
from harness.judge.verdict import Verdicts
from harness.model.case import OUTPUTS, Case, op_is_transpose, op_rank
from harness.model.loader import load_cases
from reports.repro.issue import case_summary
from reports.upstream.model import Others
from reports.upstream.others import ANOTHER, classify, label, spec_text

WITNESS_CACHE = "upstream-witness"


@dataclasses.dataclass(frozen=True)
class Witness:
    case: Case
    backend: str  # the reported implementation
    device: str
    output: str


@functools.cache
def _corpus(directory: str) -> tuple[tuple[Case, dict[str, Any]], ...]:
    return tuple((c, c.params()) for c in load_cases([directory]))


def size(case: Case) -> tuple[int, int, str]:
    """Smaller first: fewer input and weight elements, then fewer spatial dims, then the id."""
    elements = case.batch * case.in_channels * math.prod(case.input_size) + math.prod(case.weight_shape)
    return elements, case.rank, case.id


CANDIDATES = 40  # the smallest matching cases weighed for the cleanest witness


def like(case: Case, ops: set[tuple[bool, int | None]]) -> tuple[bool, bool]:
    """(the family differs, the rank differs) between a case's op and the convolutions a snippet calls (`ops`:
    reports/upstream/docstring.py code_ops); neither where the snippet calls none."""
    if not ops:
        return False, False
    family = [rank for transposed, rank in ops if transposed == op_is_transpose(case.op)]
    if not family:
        return True, True
    return False, None not in family and op_rank(case.op) not in family


def witness(entry: KnownIssue, known: KnownIssues | None = None,
            ops: set[tuple[bool, int | None]] | frozenset = frozenset()) -> Witness | None:
    """The witness of an entry: among the smallest cases of convdiff's corpus it matches on its first backend
    (installed ones first), on any host (a gradient where it selects only gradients), the one the fewest other
    root causes' entries also match on any backend, so that the others' table shows this defect and not
    another (a float16 case would drag in every half-precision finding); then float32 first, then the smaller.
    `ops`: the convolutions the snippet calls; a case of the same family (forward or transposed) comes first,
    then one of the same rank, so that the table and the spec it cites are of the convolution the body shows."""
    project = project_known_issues()
    backends = entry_backends(entry)
    if project is None or not backends:
        return None
    device = "cpu" if not entry.device or "cpu" in entry.device else entry.device[0]
    found: list[tuple[tuple, Witness, dict[str, Any]]] = []
    for case, params in _corpus(str(project.parent)):
        grads = dataclasses.replace(case, gradients=True).gradient_outputs
        output = next((o for o in OUTPUTS if (o == "out" or o in grads)
                       and entry.matches(case, backends[0], device, None, o, params)), None)
        if output is not None:
            found.append(((*like(case, set(ops)), *size(case)), Witness(case, backends[0], device, output), params))
    found = sorted(found, key=lambda f: f[0])[:CANDIDATES]
    if not found:
        return None
    others = [e for e in (known.entries if known is not None else []) if e.root != entry.root]

    def tangled(w: Witness, params: dict[str, Any]) -> int:
        return sum(1 for e in others if e.matches(w.case, e.backend[0], device, None, w.output, params))

    return min(found, key=lambda f: (f[0][0], tangled(f[1], f[2]), f[0][1], f[1].case.dtype != "float32",
                                     f[0][2:]))[1]


class _Capture:
    """The runner's judge, keeping each forward output's values (float64, in the case layout) beside its record."""

    def __init__(self) -> None:
        self.verdicts = Verdicts()
        self.arrays: dict[tuple[str, str, str], np.ndarray] = {}  # (file name, case id, backend)

    def __call__(self, case: Case, worker: Any, payload: dict[str, Any], prepared: Any) -> list[Record]:
        if payload.get("status") == "ok" and payload.get("array") is not None:
            key = (Path(case.file).name, case.id, worker.backend)
            self.arrays[key] = np.asarray(payload["array"], dtype=np.float64)
        return self.verdicts(case, worker, payload, prepared)


def implementations(chosen: Iterable[str] | None = None) -> list[str]:
    """The installed implementations a witness runs on (every installed one, or those `chosen`)."""
    names = installed_backends()
    return [n for n in names if n in set(chosen)] if chosen is not None else names


def _key(w: Witness, settings: dict[str, str], targets: list[str]) -> str:
    """The witness run's identity: the case, what it judges, the settings, every implementation and its version
    (a new release, a new adapter or a changed case runs it again)."""
    from backends.registry import get_backend

    doc = {"case": w.case.params(), "id": w.case.id, "file": Path(w.case.file).name, "output": w.output,
           "settings": settings, "targets": {b: get_backend(b).version() for b in targets}, "adapters": _adapters()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:20]


@functools.cache
def _adapters() -> str:
    """A digest of every adapter's source (backends/): a changed adapter runs the witness again."""
    root = Path(__file__).resolve().parents[3] / "backends"
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cached(path: Path | None) -> tuple[list[Record], dict[str, np.ndarray]] | None:
    if path is None or not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    return ([Record.from_json(line) for line in doc["records"]],
            {b: np.asarray(a, dtype=np.float64) for b, a in doc["arrays"].items()})


def _store(path: Path | None, records: list[Record], arrays: dict[str, np.ndarray]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"records": [r.to_json() for r in records], "arrays": {b: a.tolist() for b, a in arrays.items()}}
    path.write_text(json.dumps(doc), encoding="utf-8")


@contextlib.contextmanager
def one_at_a_time() -> Iterator[None]:
    """One witness run at a time on this machine (an flock in the temp directory): each starts a worker of
    every installed framework, ~5 GB resident for the 35 targets; six at once ran a 24 GiB machine out of
    memory (2026-11-29), and the kernel then killed workers of unrelated runs."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / "convdiff-witness.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def run_witnesses(witnesses: dict[str, Witness], settings: dict[str, str], backends: list[str],
                  known: KnownIssues | None = None, timeout: float = 120.0, fresh: bool = False) -> dict[str, Others]:
    """root -> what every implementation does on its witness (run on CPU under `settings`, one pass for those
    not cached under .convdiff-cache/upstream-witness/, or for all with `fresh`). `known`: a result another
    root's entry explains is marked as a different cause."""
    from backends.artifacts import cache_base
    from harness.execution.runner import run_cases

    base = cache_base()
    targets = list(dict.fromkeys([*(w.backend for w in witnesses.values() if installed(w.backend)), *backends]))
    paths = {root: (base / WITNESS_CACHE / f"{_key(w, settings, targets)}.json" if base else None)
             for root, w in witnesses.items()}
    found = {root: hit for root in witnesses if not fresh and (hit := _cached(paths[root])) is not None}
    todo = {root: w for root, w in witnesses.items() if root not in found}
    if todo:
        cases = {f"{Path(w.case.file).name}::{w.case.id}": dataclasses.replace(w.case, gradients=w.output != "out")
                 for w in todo.values()}
        records: list[Record] = []
        capture = _Capture()
        with one_at_a_time(), environ(settings):
            info = run_cases(list(cases.values()), [(b, "cpu") for b in targets], records.append, capture, timeout)
        for root, w in todo.items():
            file = Path(w.case.file).name
            mine = [r for r in records if r.case_id == w.case.id and r.file == file and r.output == w.output]
            arrays = {b: a for (f, cid, b), a in capture.arrays.items() if (f, cid) == (file, w.case.id)
                      } if w.output == "out" else {}
            ran = {r.backend for r in mine}
            missing = [b for b in targets if b not in ran]
            mine += [_did_not_run(w, b, info.broken.get(f"{b}-cpu") or info.skipped.get(f"{b}-cpu", "no result"))
                     for b in missing]
            found[root] = (mine, arrays)
            if not missing and not any(r.status == "error" for r in mine):  # a complete, healthy run only
                _store(paths[root], mine, arrays)
    return {root: _others(root, w, *found[root], settings, known) for root, w in witnesses.items()}


def _did_not_run(w: Witness, backend: str, why: str) -> Record:
    """A record for a target that gave no result on the witness (its worker did not start, or it was skipped)."""
    from backends.registry import get_backend

    return Record(case_id=w.case.id, file=Path(w.case.file).name, op=w.case.op, params=w.case.params(),
                  backend=backend, backend_version=get_backend(backend).version(), device="cpu", dtype=w.case.dtype,
                  status="error", output=w.output, message=f"did not run: {why}")


def _others(root: str, w: Witness, records: list[Record], arrays: dict[str, np.ndarray], settings: dict[str, str],
            known: KnownIssues | None) -> Others:
    reported, outcomes = classify(records, arrays, w.backend, w.case.expect == "invalid")
    if known is not None:
        by_backend = {r.backend: r for r in records}
        for o in outcomes:
            rec = by_backend[o.backend]
            other = known.match(w.case, rec.backend, "cpu", None, w.output, rec.error_size)
            if o.verdict in ("other-wrong", "refuses", "crashes", "error") and other is not None and other.root != root:
                o.detail = (o.detail + "; " if o.detail else "") + ANOTHER
    rows = [{**{k: getattr(r, k) for k in ("backend", "status", "max_abs_err", "message", "op", "params")},
             "label": " ".join(p for p in label(r.backend, r.backend_version) if p)} for r in records]
    return Others(case=_words(w), settings=settings, reported=reported, outcomes=outcomes,
                  spec=spec_text(w.backend, w.case.op, w.case.params().get("padding")), records=rows)


def _words(w: Witness) -> str:
    params = w.case.params()
    what = "" if w.output == "out" else f", {w.output.replace('_', ' ')}"
    return case_summary(params) + what
