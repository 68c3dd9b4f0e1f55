"""Run cases on backend workers: inputs and oracle here, framework calls in the workers.

For each case the controller sends the inputs to every worker first, computes the
float64 oracle while they work, then collects and judges each answer.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .case import Case
from .compare import compare
from .diagnosis import diagnose  # imported here, not in judge: lanes are threads, and CPython 3.11's
from .diagnosis_grad import diagnose_gradient  # parser is not safe for two threads importing at once
from .host import cpu_facts, merged
from .inputs import Inputs, make_inputs
from .known_issues import KnownIssues
from .oracle import reference
from .oracle_grad import gradient_reference
from .pool import Worker, stop_all
from .prefetch import MAX_AHEAD, Prefetch
from .records import Record

PIPELINE_DEPTH = 2  # cases queued per worker beyond the one being judged


@dataclass
class RunInfo:
    """What the run learned about its targets (for the fingerprint and skip reasons)."""

    versions: dict[str, str] = field(default_factory=dict)
    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)
    host_facts: dict[str, dict[str, Any]] = field(default_factory=dict)  # per target, from its worker
    skipped: dict[str, str] = field(default_factory=dict)


def judge(case: Case, backend: str, worker: Worker, payload: dict[str, Any],
          oracle: tuple | None, known: KnownIssues | None, inputs: Inputs | None = None,
          output: str = "out") -> Record:
    """Turn a worker's payload into a result record (comparison happens here).

    `output`: `out` for the forward payload; a gradient's name for its sub-payload
    (`payload["grads"][name]`), with `oracle` that gradient's (reference, scale).
    """
    status, message = payload["status"], payload.get("message", "")
    rec = Record(
        case_id=case.id, file=Path(case.file).name, op=case.op, params=case.params(),
        backend=backend, backend_version=worker.version, device=worker.device, dtype=case.dtype,
        status=status, output=output, message=message, duration_s=round(float(payload.get("duration_s", 0.0)), 6),
        translation=payload.get("translation", ""),
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
                          output)
        rec.status, rec.message, rec.where = verdict.status, verdict.message, verdict.where
        rec.max_abs_err, rec.rel_err, rec.bound_ratio = verdict.max_abs_err, verdict.rel_err, verdict.bound_ratio
        if verdict.status in ("mismatch", "shape_mismatch") and inputs is not None and output != "out":
            rec.diagnosis = diagnose_gradient(case, inputs, output, payload["array"], oracle)
        elif verdict.status in ("mismatch", "shape_mismatch") and inputs is not None:
            rec.diagnosis = diagnose(case, inputs, payload["array"], payload.get("tf32", False), oracle)
    if known is not None:
        entry = known.match(case, backend, worker.device, merged(cpu_facts(), worker.host), output)
        if entry is not None:
            rec.known_issue, rec.known_status = entry.id, entry.status
    return rec


def oracle_for(case: Case, inputs: Inputs) -> tuple | None:
    return None if case.geometry is None else reference(case, inputs.x, inputs.w, inputs.b)


def prepare(case: Case) -> tuple[Case, Inputs, tuple | None, dict | None]:
    """The controller's work for one case before any worker answers: inputs and oracles."""
    inputs = make_inputs(case)
    return case, inputs, oracle_for(case, inputs), gradient_oracle_for(case, inputs)


def prefetch(cases: Iterable[Case], max_ahead: int = MAX_AHEAD) -> Prefetch:
    return Prefetch(cases, prepare, max_ahead=max_ahead)


def gradient_oracle_for(case: Case, inputs: Inputs) -> dict[str, tuple]:
    """{gradient: (reference, scale)} for a gradient case; empty otherwise."""
    return gradient_reference(case, inputs) if case.gradient_outputs and case.geometry is not None else {}


def judge_case(case: Case, backend: str, worker: Worker, payload: dict[str, Any], oracle: tuple | None,
               known: KnownIssues | None, inputs: Inputs | None = None,
               grad_oracle: dict[str, tuple] | None = None) -> list[Record]:
    """The forward record, then one record per gradient the case asks for.

    A gradient that never ran because its forward failed (`inherited`) carries the
    forward's known issue unless an entry naming the gradient predicts its status.
    """
    forward = judge(case, backend, worker, payload, oracle, known, inputs)
    records = [forward]
    for name in case.gradient_outputs:
        sub = (payload.get("grads") or {}).get(name) or (
            {"status": "error", "duration_s": 0.0, "message": f"the worker returned no {name}"}
            if payload["status"] == "ok" else
            {"status": payload["status"], "inherited": True, "duration_s": 0.0,
             "message": f"no backward pass ({payload['status']}: {payload.get('message', '')})"})
        if grad_oracle is None and sub["status"] == "ok":
            grad_oracle = gradient_oracle_for(case, inputs or make_inputs(case))
        rec = judge(case, backend, worker, sub, (grad_oracle or {}).get(name), known, inputs, name)
        if sub.get("inherited") and forward.known_issue and not (rec.known_issue and rec.status in rec.known_status):
            rec.known_issue, rec.known_status = forward.known_issue, forward.known_status
        records.append(rec)
    return records


class Lane:
    """One set of warm workers (one per backend x device) working through a list of cases."""

    def __init__(self, targets: Sequence[tuple[str, str]]) -> None:
        self.workers = [Worker(b, d) for b, d in targets]

    def start(self, info: RunInfo) -> None:
        for w in self.workers:
            w.launch()
        for w in self.workers:
            if w.ready():
                info.versions[w.backend] = w.version
                info.fingerprints[w.target] = w.fingerprint
                info.host_facts[w.target] = w.host
            else:
                info.skipped[w.target] = w.reason or "unavailable"
        self.workers = [w for w in self.workers if w.reason is None]

    def run(self, cases: Iterable[Case] | Prefetch, timeout: float, known: KnownIssues | None,
            sink: Callable[[Record], None]) -> None:
        """Cases from a list, or drawn on demand (`convdiff fuzz`), or already being prepared.

        Pipelined: each worker already holds the next case while this one is judged, and
        inputs and oracles are made ahead on a thread (harness/prefetch.py), so the
        controller's float64 work overlaps the workers' instead of sitting between them."""
        pending: deque[tuple[Case, Inputs, tuple | None, dict | None]] = deque()
        for case, inputs, oracle, grad_oracle in (cases if isinstance(cases, Prefetch) else prefetch(cases)):
            for w in self.workers:
                w.submit(case, inputs)
            pending.append((case, inputs, oracle, grad_oracle))
            if len(pending) > PIPELINE_DEPTH:
                self.finish(*pending.popleft(), timeout, known, sink)
        while pending:
            self.finish(*pending.popleft(), timeout, known, sink)

    def finish(self, case: Case, inputs: Inputs, oracle: tuple | None, grad_oracle: dict | None, timeout: float,
               known: KnownIssues | None, sink: Callable[[Record], None]) -> None:
        for w in self.workers:
            for rec in judge_case(case, w.backend, w, w.collect(timeout), oracle, known, inputs, grad_oracle):
                sink(rec)

    def stop(self) -> None:
        stop_all(self.workers)


def run_cases(cases: Sequence[Case], targets: Sequence[tuple[str, str]], sink: Callable[[Record], None],
              timeout: float = 60.0, jobs: int = 1, known: KnownIssues | None = None) -> RunInfo:
    """Run every case on every target; records go to `sink` as soon as they exist."""
    info = RunInfo()
    lanes = [Lane(targets) for _ in range(max(1, min(jobs, len(cases) or 1)))]
    lock = threading.Lock()

    def locked_sink(rec: Record) -> None:
        with lock:
            sink(rec)

    # inputs and oracles start now, while the workers import their frameworks
    # (a known list: as far ahead as the memory budget allows, so the workers' import time is used)
    prepared = [prefetch(cases[i::len(lanes)], max_ahead=len(cases)) for i in range(len(lanes))]

    def work(i: int) -> None:
        lanes[i].run(prepared[i], timeout, known, locked_sink)

    try:
        for lane in lanes:
            lane.start(info)
        if len(lanes) == 1:
            work(0)
        else:
            threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(lanes))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        for p in prepared:
            p.cancel()
        for lane in lanes:
            lane.stop()
    return info
