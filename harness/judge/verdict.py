"""Verdicts: a worker's answer for one case -> result records (comparison, diagnosis, known issues).

`Verdicts(known)` is the judge every command hands the runner (harness.execution.runner.Judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backends.registry import get_backend
from harness.execution.grad_exec import has_gradient_path, without_gradient_path
from harness.execution.host import cpu_facts, merged
from harness.execution.pool import Worker
from harness.execution.records import Record
from harness.execution.runner import Prepared, gradient_oracle_for
from harness.judge.diagnosis import diagnose  # at module level, not in judge: lanes are threads, and CPython
from harness.judge.diagnosis_grad import diagnose_gradient  # 3.11's parser is not safe for two threads importing
from harness.judge.known_issues import KnownIssues
from harness.judge.relations import relation_records
from harness.model.case import Case
from harness.numerics.compare import compare
from harness.numerics.inputs import Inputs, make_inputs


def judge(case: Case, backend: str, worker: Worker, payload: dict[str, Any],
          oracle: tuple | None, known: KnownIssues | None, inputs: Inputs | None = None,
          output: str = "out") -> Record:
    """Turn a worker's payload into a result record (comparison happens here).

    `output`: `out` for the forward payload; a gradient's name for its sub-payload
    (`payload["grads"][name]`), with `oracle` that gradient's (reference, scale).
    """
    status, message = payload["status"], payload.get("message", "")
    params = case.params()  # the record's, and read (not changed) by the known-issue match
    rec = Record(
        case_id=case.id, file=Path(case.file).name, op=case.op, params=params,
        backend=backend, backend_version=worker.version, device=worker.device, dtype=case.dtype,
        status=status, output=output, message=message, duration_s=round(float(payload.get("duration_s", 0.0)), 6),
        translation=payload.get("translation", ""), load=payload.get("load"), path=payload.get("path") or "",
        error_origin=(payload.get("origin") or "convdiff") if status == "error" else None,
    )
    invalid = case.expect == "invalid"
    if status == "rejected" and invalid:
        rec.status, rec.message = "pass", f"rejected as expected: {message}"
    elif status == "ok" and invalid:
        rec.status = "accepted_invalid"
        rec.message = f"returned an output of shape {tuple(payload['array'].shape)} for an invalid case"
    elif status == "ok":
        assert oracle is not None
        verdict = compare(case, payload["array"], payload["dtype"], oracle[0], oracle[1], payload.get("tf32", False),
                          output, oracle[2] if len(oracle) > 2 else None,
                          payload.get("quant_rounding", "half_to_even"))
        rec.status, rec.message, rec.where, rec.nonfinite = verdict.status, verdict.message, verdict.where, verdict.nonfinite
        rec.max_abs_err, rec.rel_err, rec.bound_ratio = verdict.max_abs_err, verdict.rel_err, verdict.bound_ratio
        if verdict.status in ("mismatch", "shape_mismatch") and inputs is not None and output != "out":
            rec.diagnosis = diagnose_gradient(case, inputs, output, payload["array"], oracle)
        elif verdict.status in ("mismatch", "shape_mismatch") and inputs is not None:
            rec.diagnosis = diagnose(case, inputs, payload["array"], payload.get("tf32", False), oracle)
    if known is not None:
        entry = known.match(case, backend, worker.device, merged(cpu_facts(), worker.host), output,
                            rec.error_size, params, rec.path, rec.status)
        if entry is not None:
            rec.known_issue, rec.known_status, rec.known_issue_file = entry.id, entry.status, entry.source
    return rec


def judge_case(case: Case, backend: str, worker: Worker, payload: dict[str, Any], oracle: tuple | None,
               known: KnownIssues | None, inputs: Inputs | None = None,
               grad_oracle: dict[str, tuple] | None = None) -> list[Record]:
    """The forward record, then one record per gradient the case asks for, then one per relation the
    payload carries (harness/judge/relations.py; only those when the payload says `only_relations`: the
    relations judged after the shadow workers ran, the forward record already written).

    A gradient that never ran because its forward failed (`inherited`) carries the
    forward's known issue unless an entry naming the gradient predicts its status.
    """
    if payload.get("only_relations"):
        return relation_records(case, backend, worker, payload, inputs, oracle, known, None)
    forward = judge(case, backend, worker, payload, oracle, known, inputs)
    records = [forward]
    grads = payload.get("grads") or (no_gradient_path(backend, case) if payload["status"] != "ok" else None)
    for name in case.gradient_outputs:
        sub = (grads or {}).get(name) or (
            {"status": "error", "origin": "convdiff", "duration_s": 0.0, "message": f"the worker returned no {name}"}
            if payload["status"] == "ok" else
            {"status": payload["status"], "inherited": True, "duration_s": 0.0, "origin": payload.get("origin"),
             "message": f"no backward pass ({payload['status']}: {payload.get('message', '')})"})
        if grad_oracle is None and sub["status"] == "ok":
            grad_oracle = gradient_oracle_for(case, inputs or make_inputs(case))
        rec = judge(case, backend, worker, sub, (grad_oracle or {}).get(name), known, inputs, name)
        if sub.get("inherited") and forward.known_issue and not (rec.known_issue and rec.status in rec.known_status):
            rec.known_issue, rec.known_status = forward.known_issue, forward.known_status
            rec.known_issue_file = forward.known_issue_file
        records.append(rec)
    return records + relation_records(case, backend, worker, payload, inputs, oracle, known, forward)


def no_gradient_path(backend: str, case: Case) -> dict[str, dict[str, Any]] | None:
    """The gradients of a failed forward that came back without them (its worker died, or the case was
    declined), where the adapter never differentiates: unsupported, as its worker says after a forward
    it survives (harness/execution/grad_exec.py). None where it has a gradient path, or cannot be loaded here."""
    if not case.gradient_outputs:
        return None
    try:
        adapter = get_backend(backend)
    except Exception:  # noqa: BLE001 - an adapter that will not load here: the gradients inherit the forward's status
        return None
    return None if has_gradient_path(adapter) else without_gradient_path(adapter, case.gradient_outputs)


class Verdicts:
    """The runner's judge: records for a prepared case, known issues applied when given."""

    def __init__(self, known: KnownIssues | None = None) -> None:
        self.known = known

    def __call__(self, case: Case, worker: Worker, payload: dict[str, Any], prepared: Prepared) -> list[Record]:
        _, inputs, oracle, grad_oracle = prepared
        return judge_case(case, worker.backend, worker, payload, oracle, self.known, inputs, grad_oracle)
