"""Run cases on backend workers: inputs and oracle here, framework calls in the workers.

For each case the controller sends the inputs to every worker first, computes the
float64 oracle while they work, then collects and judges each answer.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .case import Case
from .compare import compare
from .inputs import Inputs, make_inputs
from .known_issues import KnownIssues
from .oracle import reference
from .pool import Worker
from .records import Record

PIPELINE_DEPTH = 2  # cases queued per worker beyond the one being judged


@dataclass
class RunInfo:
    """What the run learned about its targets (for the fingerprint and skip reasons)."""

    versions: dict[str, str] = field(default_factory=dict)
    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def judge(case: Case, backend: str, worker: Worker, payload: dict[str, Any],
          oracle: tuple | None, known: KnownIssues | None, inputs: Inputs | None = None) -> Record:
    """Turn a worker's payload into a result record (comparison happens here)."""
    status, message = payload["status"], payload.get("message", "")
    rec = Record(
        case_id=case.id, file=Path(case.file).name, op=case.op, params=case.params(),
        backend=backend, backend_version=worker.version, device=worker.device, dtype=case.dtype,
        status=status, message=message, duration_s=round(float(payload.get("duration_s", 0.0)), 6),
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
        verdict = compare(case, payload["array"], payload["dtype"], oracle[0], oracle[1], payload.get("tf32", False))
        rec.status, rec.message, rec.where = verdict.status, verdict.message, verdict.where
        rec.max_abs_err, rec.rel_err, rec.bound_ratio = verdict.max_abs_err, verdict.rel_err, verdict.bound_ratio
        if verdict.status in ("mismatch", "shape_mismatch") and inputs is not None:
            from .diagnosis import diagnose

            rec.diagnosis = diagnose(case, inputs, payload["array"], payload.get("tf32", False), oracle)
    if known is not None:
        entry = known.match(case, backend, worker.device)
        if entry is not None:
            rec.known_issue, rec.known_status = entry.id, entry.status
    return rec


def oracle_for(case: Case, inputs: Inputs) -> tuple | None:
    return None if case.geometry is None else reference(case, inputs.x, inputs.w, inputs.b)


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
            else:
                info.skipped[w.target] = w.reason or "unavailable"
        self.workers = [w for w in self.workers if w.reason is None]

    def run(self, cases: Sequence[Case], timeout: float, known: KnownIssues | None,
            sink: Callable[[Record], None]) -> None:
        """Pipelined: each worker already holds the next case while this one is judged,
        and the controller computes the oracle while the workers compute."""
        pending: deque[tuple[Case, Inputs, tuple | None]] = deque()
        for case in cases:
            inputs = make_inputs(case)
            for w in self.workers:
                w.submit(case, inputs)
            pending.append((case, inputs, oracle_for(case, inputs)))
            if len(pending) > PIPELINE_DEPTH:
                self.finish(*pending.popleft(), timeout, known, sink)
        while pending:
            self.finish(*pending.popleft(), timeout, known, sink)

    def finish(self, case: Case, inputs: Inputs, oracle: tuple | None, timeout: float,
               known: KnownIssues | None, sink: Callable[[Record], None]) -> None:
        for w in self.workers:
            sink(judge(case, w.backend, w, w.collect(timeout), oracle, known, inputs))

    def stop(self) -> None:
        for w in self.workers:
            w.stop()


def run_cases(cases: Sequence[Case], targets: Sequence[tuple[str, str]], sink: Callable[[Record], None],
              timeout: float = 60.0, jobs: int = 1, known: KnownIssues | None = None) -> RunInfo:
    """Run every case on every target; records go to `sink` as soon as they exist."""
    info = RunInfo()
    lanes = [Lane(targets) for _ in range(max(1, min(jobs, len(cases) or 1)))]
    lock = threading.Lock()

    def locked_sink(rec: Record) -> None:
        with lock:
            sink(rec)

    def work(i: int) -> None:
        lanes[i].run(cases[i::len(lanes)], timeout, known, locked_sink)

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
        for lane in lanes:
            lane.stop()
    return info
