"""What a crashed worker costs, per backend: the case it was running, plus the wait for its replacement
(part of `make bench`).

    python bench/crash_restart.py [--backends LIST] [--crashes 3] [--between 4]

A real worker (harness/execution/pool.Worker, as `convdiff run` drives it) runs a small float32 conv2d
case until its time is steady; then its process is killed with SIGKILL while idle, the way a segfault,
an abort or the OOM killer ends it, and the same case is sent twice: the first gets `crash` (the one
result a crash must cost), the second waits for the replacement. The crash's cost is the time of those
two answers less one steady case. Before each later kill, `--between` steady cases run and the spare
(pool.Worker._restart_and_resend) has greeted: the cost of crashes further apart than its start.

Side by side, per backend: the replacement forked from the framework's zygote template (what convdiff
does), and a fresh interpreter importing the framework (CONVDIFF_ZYGOTE's fallback, what a harness
without templates pays); for each, the first crash (no spare yet) and the median of the later ones.
No test double: the frameworks are real, and the kill is the only thing injected.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.execution.pool import Worker, stop_all  # noqa: E402
from harness.model.case import Case  # noqa: E402
from harness.model.loader import load_cases  # noqa: E402
from harness.numerics.inputs import Inputs, make_inputs  # noqa: E402

BACKENDS = ("torch", "tensorflow", "paddle", "jax", "onnxruntime", "openvino", "tvm", "torch-inductor",
            "tf2onnx-ort", "paddle2onnx-ort", "litert")
TIMEOUT_S = 600.0


def small_case() -> Case:
    """The first float32, channels-first conv2d of cases/conv2d.yaml: every backend above runs it."""
    for case in load_cases([ROOT / "cases" / "conv2d.yaml"]):
        if case.dtype == "float32" and case.op == "conv2d" and case.layout == "channels_first" and not case.epilogue:
            return case
    raise SystemExit("cases/conv2d.yaml has no plain float32 conv2d")


def answer(worker: Worker, case: Case, inputs: Inputs) -> tuple[str, float]:
    start = time.monotonic()
    worker.submit(case, inputs)
    status = worker.collect(TIMEOUT_S).get("status", "?")
    return status, time.monotonic() - start


def steady(worker: Worker, case: Case, inputs: Inputs, n: int) -> float:
    """Median seconds of a case, after one untimed run (the first compile in this process)."""
    answer(worker, case, inputs)
    return statistics.median(answer(worker, case, inputs)[1] for _ in range(n))


def spare_ready(worker: Worker) -> None:
    """Wait until the spare has greeted (a fork: at once; a fresh interpreter: its import), as it has in a
    run whose crashes are further apart than that."""
    if worker.spare is not None:
        wait([worker.spare[1]], timeout=TIMEOUT_S)


def crash_costs(backend: str, fresh: bool, crashes: int, between: int, case: Case, inputs: Inputs) -> tuple[float, list[float]] | str:
    """(steady case seconds, each crash's cost in seconds), or why the backend cannot run here."""
    worker = Worker(backend, "cpu")
    worker.fresh_only = fresh
    try:
        if not worker.ready():
            return worker.reason or "did not start"
        base = steady(worker, case, inputs, between)
        costs = []
        for i in range(crashes):
            if i:
                for _ in range(between):  # a real run goes on meanwhile
                    answer(worker, case, inputs)
                spare_ready(worker)
            assert worker.proc is not None
            os.kill(worker.proc.pid, signal.SIGKILL)
            worker.proc.wait()
            lost, t_lost = answer(worker, case, inputs)
            status, t_next = answer(worker, case, inputs)
            if lost != "crash" or status != "ok":
                return f"unexpected statuses after a kill: {lost}, then {status}"
            costs.append(t_lost + t_next - base)
        return base, costs
    finally:
        stop_all([worker])


def cell(costs: tuple[float, list[float]] | str, which: str) -> str:
    if isinstance(costs, str):
        return "-"
    later = costs[1][1:]  # a cost within the case's own jitter can come out a little below 0: shown as 0
    if which == "first":
        return f"{max(costs[1][0], 0.0) * 1e3:.0f}"
    return f"{max(statistics.median(later), 0.0) * 1e3:.0f}" if later else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--crashes", type=int, default=3, help="kills per backend and way of starting")
    ap.add_argument("--between", type=int, default=4, help="steady cases before each later kill")
    args = ap.parse_args()
    case = small_case()
    inputs = make_inputs(case)
    print(f"case {case.file}::{case.id}; {args.crashes} kills per backend and way of starting; ms")
    print(f"{'backend':<18}{'case':>8}{'forked: 1st':>13}{'later':>8}{'fresh: 1st':>12}{'later':>8}")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CONVDIFF_CACHE"] = cache  # both ways share it: neither pays the other's first build
        for backend in args.backends.split(","):
            forked = crash_costs(backend, False, args.crashes, args.between, case, inputs)
            fresh = crash_costs(backend, True, args.crashes, args.between, case, inputs)
            if isinstance(forked, str):
                print(f"{backend:<18}  {forked}")
                continue
            print(f"{backend:<18}{forked[0] * 1e3:>8.1f}{cell(forked, 'first'):>13}{cell(forked, 'later'):>8}"
                  f"{cell(fresh, 'first'):>12}{cell(fresh, 'later'):>8}", flush=True)
    print("cost = the lost case's answer + the next case's - one steady case; 'later': median of the kills after "
          "the first, each with the spare started since ready")
    return 0


if __name__ == "__main__":
    sys.exit(main())
