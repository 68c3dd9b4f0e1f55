"""The lane's pipeline (harness/execution/runner.py): how many cases a worker holds ahead, by count and by
the size of their inputs, and that its depth changes no record."""

from __future__ import annotations

import numpy as np
import pytest

from harness.execution import pool, runner
from harness.judge.verdict import Verdicts
from harness.numerics.inputs import Inputs, make_inputs
from tests.helpers import make_case

CASES = [make_case(id=f"c{i}", op="conv2d", in_channels=2, out_channels=3, input_size=6 + i, kernel_size=3, bias=True)
         for i in range(12)]


def test_input_bytes_counts_every_array_a_worker_receives() -> None:
    inputs = Inputs(x=np.zeros((2, 3, 4), np.float32), w=np.zeros((5, 3, 1), np.float64), b=None,
                    dy=np.zeros(7, np.float16), epilogue=({"scale": np.zeros(3, np.float32), "alpha": 0.5},))
    assert runner.input_bytes(inputs) == 2 * 3 * 4 * 4 + 5 * 3 * 8 + 7 * 2 + 3 * 4


def _run(monkeypatch: pytest.MonkeyPatch, depth: int, cap: int) -> tuple[dict, int]:
    """The records' (status, max |err|) by case, and the most cases one worker held at once."""
    monkeypatch.setattr(runner, "PIPELINE_DEPTH", depth)
    monkeypatch.setattr(runner, "PIPELINE_BYTES", cap)
    most = 0
    submit = pool.Worker.submit

    def counted(self, *args, **kwargs):
        nonlocal most
        submit(self, *args, **kwargs)
        most = max(most, len(self.inflight))

    monkeypatch.setattr(pool.Worker, "submit", counted)
    records: list = []
    runner.run_cases(CASES, [("torch", "cpu")], records.append, Verdicts())
    return {r.case_id: (r.status, r.max_abs_err) for r in records}, most


def test_depth_and_size_bound_what_a_worker_holds_and_change_no_record(monkeypatch: pytest.MonkeyPatch) -> None:
    deep, most_deep = _run(monkeypatch, 32, 16 << 20)
    one_byte, most_small = _run(monkeypatch, 32, 1)  # every case is larger: the head, and one more
    shallow, most_shallow = _run(monkeypatch, 3, 16 << 20)
    assert deep == one_byte == shallow and len(deep) == len(CASES)
    assert {s for s, _ in deep.values()} == {"pass"}
    # a case leaves a worker's queue when it is judged: all 12 (fewer than the depth, a few KB each); one
    # beyond the head when every case is over the byte limit; three beyond it at depth 3
    assert (most_deep, most_small, most_shallow) == (len(CASES), 2, 4)
    assert runner.input_bytes(make_inputs(CASES[0])) < 16 << 20
