"""The plan (harness/execution/worker.py `plan`, pool.Worker.send_plan): a case the backend declares
unsupported gets the worker's own answer without its inputs being sent, and no record changes."""

from __future__ import annotations

import pytest

from backends.registry import get_backend
from harness.execution.pool import Worker
from harness.execution.runner import run_cases
from harness.execution.worker import unsupported_reason
from harness.judge.verdict import Verdicts

from .helpers import make_case

FLOAT = make_case(id="f", op="conv1d", in_channels=4, out_channels=2, input_size=5, kernel_size=2)
QUANT = make_case(id="q", op="conv1d", in_channels=4, out_channels=2, input_size=4, kernel_size=2, dtype="uint8",
                  quant={"range": "full"})
GRAD = make_case(id="g", op="conv1d", in_channels=2, out_channels=2, input_size=5, kernel_size=2, gradients=True)


def _run(monkeypatch, planned: bool) -> tuple[list[tuple], dict[str, list[str]]]:
    sent: dict[str, list[str]] = {}
    submit = Worker.submit

    def spy(self, case, inputs, wire=None):
        sent.setdefault(self.backend, []).append(case.id)
        return submit(self, case, inputs, wire)

    monkeypatch.setattr(Worker, "submit", spy)
    if not planned:  # the plan is asked and answered, then ignored: every case is sent
        monkeypatch.setattr(Worker, "declines", lambda self, case: None)
    recs: list = []
    run_cases([FLOAT, QUANT, GRAD], [("torch", "cpu"), ("torch-ao-x86", "cpu")], recs.append, Verdicts())
    return [(r.backend, r.case_id, r.output, r.status, r.message, r.max_abs_err) for r in recs], sent


def test_declined_cases_send_no_inputs_and_records_are_unchanged(monkeypatch):
    for b in ("torch", "torch-ao-x86"):
        if get_backend(b).unavailable_reason():
            pytest.skip(get_backend(b).unavailable_reason())
    with_plan, sent = _run(monkeypatch, True)
    monkeypatch.undo()
    without, sent_all = _run(monkeypatch, False)
    assert with_plan == without  # every status, message and error as when every case is sent
    assert sent_all == {"torch": ["f", "q", "g"], "torch-ao-x86": ["f", "q", "g"]}
    # torch declines the quantized case, torch-ao-x86 the float one; a gradient case is always sent
    assert sent == {"torch": ["f", "g"], "torch-ao-x86": ["q", "g"]}
    by = {(b, c): (s, m) for b, c, o, s, m, _ in with_plan if o == "out"}
    assert by[("torch-ao-x86", "f")][0] == by[("torch", "q")][0] == "unsupported"
    assert by[("torch", "q")][1] == unsupported_reason(get_backend("torch"), QUANT, "cpu")  # the adapter's words
