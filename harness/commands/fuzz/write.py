"""Write down what `convdiff fuzz` found: minimal cases, known-issue stubs, upstream-ready reports.

For each new signature the first failing case is shrunk with the minimizer (status and
diagnosis kept) on one warm worker per backend, within a time budget. The minimal
case is appended to the --write case file (with a comment naming backend, status,
diagnosis and message), a known_issues.yaml entry to review goes to a stub beside it
(`.yml`, so no loader mistakes it for a case file), and a Markdown report beside it
says everything a maintainer needs: framework and version, host facts, the
reproducer, observed vs expected at the worst element, the diagnosis, and the other
backends' verdicts on the same minimal case.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.commands.minimize import Minimized, MinimizeError, Probe, case_size, fields_of, minimize
from harness.execution.host import cpu_facts, env_settings
from harness.execution.pool import Worker
from harness.execution.records import Record
from harness.execution.runner import oracle_for
from harness.judge.common import Common
from harness.judge.known_issues import KnownIssues
from harness.judge.verdict import judge, judge_case
from harness.model.case import Case
from harness.model.schema import CASE_FIELDS, is_schema_default
from harness.numerics.bound import error_bound
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference

STUB_SUFFIX = ".known-issues-stub.yml"


class BudgetProbe(Probe):
    """A Probe that judges one output (the forward result or a gradient) and stops trying
    candidates once its deadline passes (the minimizer then keeps its best)."""

    deadline = float("inf")
    output = "out"

    def __init__(self, worker: Worker, timeout: float) -> None:  # a warm worker of the fuzz run, not a new one
        self.backend, self.timeout, self.worker, self.tried = worker.backend, timeout, worker, 0

    def run(self, case: Case) -> Record:
        if time.monotonic() > self.deadline and self.tried:
            self.tried += 1
            payload = {"status": "unsupported", "message": "minimization budget spent"}
            return judge(case, self.backend, self.worker, payload, None, None)
        if self.output == "out":
            return super().run(case)
        self.tried += 1
        inputs = make_inputs(case)
        self.worker.submit(case, inputs)
        records = judge_case(case, self.backend, self.worker, self.worker.collect(self.timeout),
                             oracle_for(case, inputs), self.known, inputs)
        same = [r for r in records if r.output == self.output]
        if same:
            return same[0]
        # a candidate without the judged output (no bias: no grad_bias) cannot keep the failure
        return judge(case, self.backend, self.worker, {"status": "unsupported", "message": "output gone"}, None, None)


@dataclass
class Shrunk:
    minimized: Minimized
    payload: dict[str, Any]  # the backend's raw answer on the minimal case (observed values)


def shrink(records: list[Record], cases: dict[str, Case], workers: dict[str, Worker], budget_s: float,
           per_case_s: float, timeout: float, known: KnownIssues | None = None) -> dict[str, Shrunk | str]:
    """Minimize the first failing record of each new signature on the run's warm workers (one per
    backend): {case_id@backend: result, or why there is none}."""
    results: dict[str, Shrunk | str] = {}
    stop = time.monotonic() + budget_s
    for rec in records:
        key = f"{rec.case_id}@{rec.backend}"
        if time.monotonic() > stop:
            results[key] = "minimization budget spent before this signature"
            continue
        probe = BudgetProbe(workers[rec.backend], timeout)
        probe.known = known  # candidates a known issue explains are not this new finding
        probe.deadline, probe.output = min(stop, time.monotonic() + per_case_s), rec.output
        # the backend in the id: two backends failing on one generated case get two minimal cases
        case = dataclasses.replace(cases[rec.case_id], id=f"{rec.case_id}_{re.sub('[^a-z0-9]+', '_', rec.backend)}")
        try:
            m = minimize(case, rec.backend, rec.device, timeout, probe=probe)
        except MinimizeError as exc:
            results[key] = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - one signature's trouble must not lose the run's outputs
            results[key] = f"minimization failed: {type(exc).__name__}: {exc}"
            continue
        probe.worker.submit(m.case, make_inputs(m.case))
        results[key] = Shrunk(m, probe.worker.collect(timeout))
    return results


def case_entry(m: Minimized, comment: list[str]) -> str:
    """One `- id: ...` entry of a case file, with comment lines above it."""
    f = fields_of(m.case)
    f["tags"] = [t for t in f["tags"] if t != "fuzz"] + ["fuzz"]
    lines = [f"  # {c}"[:400] for c in comment] + [f"  - id: {m.case.id}"]
    lines += [f"    {k}: {json.dumps(f[k])}" for k in CASE_FIELDS if k in f and k != "id" and not is_schema_default(k, f[k])]
    return "\n".join(lines) + "\n"


def append_case(path: Path, entry: str, case_id: str) -> bool:
    """Append an entry to a case file (created with its header); False if the id is already there."""
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if f"- id: {case_id}\n" in text:
            return False
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        from harness.model.case_schema import with_schema_comment

        text = with_schema_comment(path, "# Minimized cases found by `convdiff fuzz` (one per new signature). Review each with the\n"
                f"# known-issue stubs in {path.name.removesuffix('.yaml')}{STUB_SUFFIX} and the .md reports beside it.\n"
                "cases:\n")
    path.write_text(text + entry, encoding="utf-8")
    return True


def stub_entry(rec: Record, case: Case, rule: Common | None = None) -> str:
    """A known_issues.yaml entry to review; reason and link are to be written. Its selector is `rule`, what the
    run's failures of this signature have in common (harness/judge/common.py), where there is one; else the
    minimal case alone."""
    ident = f"{rec.backend.replace(':', '-')}-{case.id}".replace("_", "-")
    out = "" if rec.output == "out" else f", output: {rec.output}"
    if rule is not None:
        cases = [f"    # {rule.line}; the minimal case: {case.id}",
                 f"    cases: {{op: {rec.op}{out}, when: {json.dumps(rule.when)}}}"]
    else:
        cases = [f"    cases: {{op: {rec.op}, case: {case.id}{out}}}  # widen to the behaviour before moving it"]
    return "\n".join([
        f"  - id: {ident}",
        f"    backend: {json.dumps(rec.backend)}",
        f"    device: {rec.device}",
        *cases,
        f"    status: {rec.status}",
        f"    reason: {json.dumps('TODO (review): ' + (rec.diagnosis or '') + ' ' + rec.message)}",
        '    link: "TODO: upstream issue (search the tracker; else the docs/source line showing the behaviour)"',
    ]) + "\n"


def append_stub(path: Path, entry: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else (
        "# Known-issue stubs from `convdiff fuzz`: review, widen the selector, write the reason and the\n"
        "# upstream link, then move the entry into cases/known_issues.yaml.\nissues:\n")
    path.parent.mkdir(parents=True, exist_ok=True)  # a campaign with unlisted outcomes but no new finding
    path.write_text(text + entry, encoding="utf-8")


def worst_element(case: Case, rec: Record, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Observed vs expected at the worst element, with the bound there (valid cases with an output)."""
    if case.geometry is None or payload.get("status") != "ok" or rec.output != "out":
        return None
    inputs = make_inputs(case)
    ref, scale, *trace = reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)
    out = np.asarray(payload["array"], dtype=np.float64)
    if out.shape != ref.shape:
        return {"observed_shape": list(out.shape), "expected_shape": list(ref.shape)}
    bound = error_bound(case, ref, scale, payload.get("tf32", False), trace=trace[0] if trace else None)
    unit = np.maximum(bound, np.finfo(np.float64).tiny)
    with np.errstate(over="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(out), np.abs(out - ref) / unit, np.inf)
    idx = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return {"index": [int(i) for i in idx], "observed": float(out[idx]), "expected": float(ref[idx]),
            "bound": float(bound[idx]), "abs_err": float(abs(out[idx] - ref[idx]))}


def report_md(rec: Record, case: Case, entry: str, payload: dict[str, Any], others: list[Record],
              fingerprint: dict[str, Any], host: dict[str, Any], message: str) -> str:
    """An upstream-ready issue text for one new signature."""
    from reports.repro.script import ReproUnavailable, script_for

    try:
        script = script_for(rec)
    except ReproUnavailable as exc:
        script = f"# no standalone reproducer: {exc}"
    where = worst_element(case, rec, payload)
    diag = f" ({rec.diagnosis})" if rec.diagnosis else ""
    title = f"{rec.backend} {rec.backend_version}: {rec.op} gives {rec.status}{diag}"
    facts = {**cpu_facts(), **host}
    lines = [
        f"# {title}", "",
        f"- **Framework:** {rec.backend} {rec.backend_version} on {rec.device}",
        f"- **Host:** {facts.get('cpu_model', '?')}; ISA flags: {' '.join(facts.get('cpu_flags', [])) or 'none'}",
        f"- **Environment settings:** {', '.join(f'{k}={v}' for k, v in env_settings().items()) or 'none set'}",
        f"- **Framework facts:** {', '.join(f'{k}={v}' for k, v in host.items()) or 'none reported'}",
        f"- **Build fingerprint:** {', '.join(f'{k}={v}' for k, v in fingerprint.items()) or '-'}",
        "", "## What happens", "", message or rec.message, "",
        "## Minimal case", "", "```yaml", "cases:", entry.rstrip("\n"), "```", "",
        "## Reproducer (the framework plus NumPy only)", "", "```python", script.rstrip("\n"), "```", "",
        "## Observed vs expected", "",
    ]
    if where and "index" in where:
        lines += [f"Worst element {tuple(where['index'])} (case layout): observed {where['observed']!r}, "
                  f"expected (float64 reference) {where['expected']!r}; |error| {where['abs_err']:.3g}, "
                  f"allowed {where['bound']:.3g}. Max |error| {_g(rec.max_abs_err)}, {_g(rec.bound_ratio)} x the bound.", ""]
    elif where:
        lines += [f"Output shape {tuple(where['observed_shape'])}, expected {tuple(where['expected_shape'])}.", ""]
    elif case.expect == "invalid":
        lines += ["Expected: the call raises (the configuration is not a valid convolution); "
                  f"observed: {rec.message}.", ""]
    else:
        lines += [f"Expected: a result within the bound; observed: {rec.status}: {rec.message}", ""]
    lines += [f"Diagnosis: {rec.diagnosis or 'none of the known bug classes explains it exactly'}.", "",
              "## Other implementations on the same case", "", "| backend | version | status | bound ratio |",
              "| --- | --- | --- | --- |"]
    lines += [f"| {o.backend} | {o.backend_version} | {o.status} | {_g(o.bound_ratio)} |" for o in others]
    lines += ["", "Semantics: PyTorch's documented conv/conv_transpose; `padding: same/valid` as TensorFlow's. "
              "Found by convdiff fuzz; reference: float64 direct summation with a per-element rounding bound."]
    return "\n".join(lines) + "\n"


def _g(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def minimal_summary(m: Minimized) -> dict[str, Any]:
    return {"minimal_case": m.case.id, "size": [case_size(m.original), case_size(m.case)],
            "minimize_s": round(m.seconds, 1), "candidates": m.tried}
