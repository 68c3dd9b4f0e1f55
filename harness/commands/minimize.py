"""`convdiff minimize`: shrink a failing case while its status and diagnosis persist.

Greedy delta debugging over the case's fields, in the order a reader wants them
small: batch, channels, spatial sizes, kernel sizes, then stride / dilation /
padding / output_padding / groups toward 1 or 0, and bias / layout toward the
plain form. Each field tries its smallest value first, and passes repeat until
nothing shrinks. Every candidate runs on one warm worker (no process per
candidate), so the seed cases minimize in seconds. The result is a case file
that `convdiff validate` accepts, plus the standalone reproducer when one exists.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.execution.pool import Worker
from harness.execution.records import Record
from harness.execution.runner import oracle_for
from harness.judge.known_issues import KnownIssues
from harness.judge.verdict import judge, judge_case
from harness.model.build import make_case
from harness.model.case import Case
from harness.model.loader import load_cases
from harness.model.schema import CASE_FIELDS, is_schema_default
from harness.numerics.inputs import make_inputs

Fields = dict[str, Any]
MAX_PASSES = 6


class MinimizeError(Exception):
    """The case cannot be minimized (not found, passes, backend unavailable); the message says why."""


@dataclass
class Minimized:
    original: Case
    case: Case
    record: Record
    tried: int
    seconds: float


def case_size(case: Case) -> int:
    """Elements of input plus weight: the measure of 'smaller'."""
    return case.batch * case.in_channels * math.prod(case.input_size) + math.prod(case.weight_shape)


def find_case(case_id: str, paths: Sequence[str]) -> Case:
    """A case by id (or FILE::ID) among the case files."""
    file, sep, cid = case_id.rpartition("::")
    found = [c for c in load_cases(paths)
             if c.id == cid and (not sep or Path(c.file).name == Path(file).name)]
    if not found:
        raise MinimizeError(f"no case '{case_id}' in {', '.join(paths)}")
    if len(found) > 1:
        raise MinimizeError(f"'{case_id}' is ambiguous: name it as FILE::ID "
                            f"({', '.join(Path(c.file).name for c in found)})")
    return found[0]


def fields_of(case: Case) -> Fields:
    """The case as YAML fields (lists, not tuples), with its seed made explicit."""
    d = case.params()
    d["tags"] = list(case.tags)
    if d.get("quant") is not None:  # only what the case pins: the rest is drawn from the seed, as written
        d["quant"] = {k: v for k, v in d["quant"].items() if v is not None}
    return d


def _smaller(v: int, floor: int) -> list[int]:
    """Candidate values below v, smallest first."""
    return sorted({c for c in (floor, v // 2, v - 1) if floor <= c < v})


def _per_dim(name: str, floor: int) -> Callable[[Fields], Iterator[Fields]]:
    def gen(f: Fields) -> Iterator[Fields]:
        for i, v in enumerate(f[name]):
            for c in _smaller(v, floor):
                yield {**f, name: [*f[name][:i], c, *f[name][i + 1:]]}
    return gen


def _scalar(name: str, floor: int) -> Callable[[Fields], Iterator[Fields]]:
    def gen(f: Fields) -> Iterator[Fields]:
        for c in _smaller(f[name], floor):
            yield {**f, name: c}
    return gen


def _channels(f: Fields) -> Iterator[Fields]:
    """Both channel counts together first (keeps groups dividing them), then each alone."""
    g = f["groups"]
    for c in _smaller(min(f["in_channels"], f["out_channels"]) // g, 1):
        yield {**f, "in_channels": c * g, "out_channels": c * g}
    for name in ("in_channels", "out_channels"):
        for c in _smaller(f[name] // g, 1):
            yield {**f, name: c * g}


def _groups(f: Fields) -> Iterator[Fields]:
    for g in range(1, f["groups"]):
        if f["in_channels"] % g == 0 and f["out_channels"] % g == 0:
            yield {**f, "groups": g}


def _padding(f: Fields) -> Iterator[Fields]:
    if isinstance(f["padding"], str):
        return
    pads = [list(p) for p in f["padding"]]
    for i, pair in enumerate(pads):
        for side, v in enumerate(pair):
            for c in _smaller(v, 0):
                new = [list(p) for p in pads]
                new[i][side] = c
                yield {**f, "padding": new}


def _flag(name: str, plain: Any) -> Callable[[Fields], Iterator[Fields]]:
    def gen(f: Fields) -> Iterator[Fields]:
        if f[name] != plain:
            yield {**f, name: plain}
    return gen


def _epilogue(f: Fields) -> Iterator[Fields]:
    """The epilogue without all of it, then without one op at a time (its constants are drawn anew)."""
    ops = list(f.get("epilogue") or [])
    if ops:
        yield {**f, "epilogue": []}
    for i in range(len(ops)) if len(ops) > 1 else ():
        yield {**f, "epilogue": ops[:i] + ops[i + 1:]}


SHRINKERS: list[Callable[[Fields], Iterator[Fields]]] = [
    _epilogue, _scalar("batch", 1), _channels, _per_dim("input_size", 1), _per_dim("kernel_size", 1),
    _per_dim("stride", 1), _per_dim("dilation", 1), _padding, _per_dim("output_padding", 0), _groups,
    _flag("bias", False), _flag("layout", "channels_first"),
]


class Probe:
    """Runs candidate cases on one warm worker and says whether the failure persists.

    `output`: the result judged (`out`, or a gradient: the case then runs its backward pass).
    """

    known: KnownIssues | None = None  # judge candidates against these (minimize() keeps none they explain)

    def __init__(self, backend: str, device: str, timeout: float, output: str = "out",
                 known: KnownIssues | None = None) -> None:
        self.backend, self.timeout, self.output, self.known = backend, timeout, output, known
        self.worker = Worker(backend, device)
        if not self.worker.ready():
            raise MinimizeError(f"{backend}-{device} cannot run: {self.worker.reason}")
        self.tried = 0

    def run(self, case: Case) -> Record:
        self.tried += 1
        if self.output != "out" and not case.gradients:
            case = dataclasses.replace(case, gradients=True)
        inputs = make_inputs(case)
        payload = self.worker.submit(case, inputs) or self.worker.collect(self.timeout)
        if self.output == "out":
            return judge(case, self.backend, self.worker, payload, oracle_for(case, inputs), self.known, inputs)
        records = judge_case(case, self.backend, self.worker, payload, oracle_for(case, inputs), self.known, inputs)
        found = [r for r in records if r.output == self.output]
        if not found:  # e.g. grad_bias of a candidate without a bias: the failure does not persist
            return Record(case_id=case.id, file=case.file, op=case.op, params=case.params(), backend=self.backend,
                          backend_version=self.worker.version, device=self.worker.device, dtype=case.dtype,
                          status="pass", output=self.output, message=f"no {self.output} for this candidate")
        return found[0]

    def stop(self) -> None:
        self.worker.stop()


def _build(f: Fields, case_id: str, file: str) -> Case | None:
    try:
        return make_case(file=file, **{**f, "id": case_id})
    except ValueError:
        return None  # not a valid convolution: not a candidate


def minimize(case: Case, backend: str, device: str = "cpu", timeout: float = 60.0,
             probe: Probe | None = None, output: str = "out", known: KnownIssues | None = None) -> Minimized:
    """The smallest case (greedy) with the same status and diagnosis as `case` on `backend`.

    A caller that already holds a warm `probe` for the backend passes it (and stops it). With `known`
    (or a probe holding them), a failure no known issue explains is shrunk only through candidates that
    stay unexplained: a smaller case whose failure a known issue explains is another finding, not this one
    (seed-28 fuzz: two minimized cases had drifted onto known float64 entries).
    """
    start = time.monotonic()
    own = probe is None
    probe = probe or Probe(backend, device, timeout, output)
    if known is not None:
        probe.known = known
    tried0 = probe.tried
    try:
        first = probe.run(case)
        if first.status in ("pass", "unsupported"):
            what = "" if probe.output == "out" else f" for {probe.output}"
            raise MinimizeError(f"{case.id} gives '{first.status}'{what} on {backend}-{device}: nothing to minimize")
        want = (first.status, first.diagnosis)
        stay_unexplained = first.unexpected
        best, best_rec, fields = case, first, fields_of(case)
        for _ in range(MAX_PASSES):
            changed = False
            for shrink in SHRINKERS:
                for cand_fields in shrink(fields):
                    cand = _build(cand_fields, minimal_id(case.id), case.file)
                    if cand is None or case_size(cand) > case_size(best):
                        continue
                    rec = probe.run(cand)
                    if (rec.status, rec.diagnosis) == want and (rec.unexpected or not stay_unexplained):
                        best, best_rec, fields, changed = cand, rec, cand_fields, True
                        break  # smallest value that keeps the failure; the field gets another go next pass
            if not changed:
                break
    finally:
        if own:
            probe.stop()
    return Minimized(case, best, best_rec, probe.tried - tried0, time.monotonic() - start)


def minimal_id(case_id: str) -> str:
    """A valid case id for the minimized case (sweep ids carry brackets)."""
    return re.sub(r"[^a-z0-9_]+", "_", case_id.lower()).strip("_") + "_min"


def case_yaml(result: Minimized) -> str:
    """The minimal case as a case file (JSON flow values are valid YAML)."""
    rec, orig = result.record, result.original
    f = fields_of(result.case)
    lines = [
        f"# Minimized from {Path(orig.file).name}::{orig.id} on {rec.backend}-{rec.device}: {rec.status}"
        + (f", diagnosis {rec.diagnosis}" if rec.diagnosis else ""),
        f"# size {case_size(orig)} -> {case_size(result.case)} elements (input + weight); "
        f"{result.tried} candidates in {result.seconds:.1f} s. {rec.message}"[:300],
        "cases:",
        f"  - id: {minimal_id(orig.id)}",
    ]
    lines += [f"    {k}: {json.dumps(f[k])}" for k in CASE_FIELDS
              if k in f and k != "id" and not is_schema_default(k, f[k])]
    return "\n".join(lines) + "\n"


def write_outputs(result: Minimized, out_dir: Path) -> list[Path]:
    """`<id>.yaml`, and `<id>_repro.py` when a reproducer template exists for the backend."""
    out_dir.mkdir(parents=True, exist_ok=True)
    name = minimal_id(result.original.id)
    written = [out_dir / f"{name}.yaml"]
    written[0].write_text(case_yaml(result), encoding="utf-8")
    try:
        from reports.repro.script import ReproUnavailable, script_for
    except ImportError:
        return written
    try:
        script = script_for(result.record)
    except ReproUnavailable:
        return written
    repro = out_dir / f"{name}_repro.py"
    repro.write_text(script, encoding="utf-8")
    written.append(repro)
    return written
