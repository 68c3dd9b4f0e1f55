"""What an exception out of an adapter becomes (harness/execution/failures.py): whose error it is, and a
resource blow-up recorded as the failure it is, not as a refusal."""

from __future__ import annotations

import json

from backends.base import Rejected
from backends.testing.fault import FaultBackend
from harness.execution.failures import failure
from harness.numerics.inputs import make_inputs

from .helpers import make_case

CASE = make_case(id="small", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3)


def raised(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - the exception is what is tested
        return exc
    raise AssertionError("nothing raised")


def test_an_exception_in_the_adapters_code_is_the_adapters() -> None:
    adapter = FaultBackend("exception")
    exc = raised(adapter.run, CASE, make_inputs(CASE), "cpu")
    got = failure(exc, adapter, CASE, None, 0.0)
    assert got["status"] == "error" and got["origin"] == "adapter"
    assert got["message"].startswith("RuntimeError: injected fault: adapter raised (raised in the adapter's code, at ")
    assert "fault.py:" in got["message"] and got["message"].endswith(", in run)")


def test_an_exception_in_convdiffs_code_is_convdiffs() -> None:
    invalid = make_case(id="bad", op="conv2d", in_channels=3, out_channels=4, input_size=5, kernel_size=3,
                        groups=2, expect="invalid")
    exc = raised(lambda: invalid.output_shape)  # harness/model/case.py asserts: an invalid case has no output
    got = failure(exc, FaultBackend("exception"), invalid, None, 0.0)
    assert got["status"] == "error" and got["origin"] == "convdiff"
    assert "an internal failure of convdiff" in got["message"] and "harness/model/case.py:" in got["message"]


def test_out_of_memory_is_a_crash_with_what_was_asked_and_the_case_size() -> None:
    inputs = make_inputs(CASE)
    for exc in (raised(FaultBackend("oom").run, CASE, inputs, "cpu"),  # wrapped in Rejected
                MemoryError("Unable to allocate 51.9 GiB for an array with shape (7, 1 << 30)")):
        got = failure(exc, FaultBackend("oom"), CASE, inputs, 0.0)
        # x 2*5*5*4 = 200 B, w 3*2*3*3*4 = 216 B, the output 3*3*3*4 = 108 B: 524 B in all
        assert got["status"] == "crash" and got["message"].startswith(
            "out of memory on a case whose own arrays are 524 B in all (x 200 B, w 216 B, output 108 B): "
            "MemoryError: Unable to allocate ")
    plain = failure(Rejected("ValueError: groups must divide"), FaultBackend("oom"), CASE, inputs, 0.0)
    assert (plain["status"], plain["message"]) == ("rejected", "ValueError: groups must divide")


def test_the_console_says_whose_error_and_where(tmp_path, capsys) -> None:
    from harness.commands.cli import main  # the command as a user runs it: a worker, a record, the console

    (tmp_path / "one.yaml").write_text("cases:\n  - {id: a, op: conv1d, in_channels: 1, out_channels: 1, "
                                       "input_size: 4, kernel_size: 2}\n")
    rc = main(["run", str(tmp_path / "one.yaml"), "--backends", "fault:exception", "--out", str(tmp_path / "o")])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "one.yaml::a" in ln)
    assert rc == 1
    assert "fault:exception-cpu  error (adapter)  RuntimeError: injected fault: adapter raised (raised in the " \
           "adapter's code, at backends/testing/fault.py:" in line and line.endswith(", in run)")
    record = json.loads((tmp_path / "o" / "results.jsonl").read_text())
    assert record["status"] == "error" and record["error_origin"] == "adapter"


def test_a_worker_whose_refusal_leaves_stale_state_is_replaced() -> None:
    """fault:stale_after_refusal adds 1 to every output its process gives after refusing a case (as paddle.inference
    carries a refused model's activation into the next predictor); the worker that refused is replaced, so the
    cases queued behind the refusal, and those after, are judged right against the oracle."""
    from .helpers import run_on

    cases = [make_case(id=f"{name}", op="conv1d", in_channels=2, out_channels=3, input_size=6, kernel_size=3)
             for name in ("first", "refuse_one", "second", "refuse_two", "third")]
    got = {r.case_id: r.status for r in run_on(cases, ["fault:stale_after_refusal"])}
    assert got == {"first": "pass", "refuse_one": "rejected", "second": "pass", "refuse_two": "rejected",
                   "third": "pass"}, got


def test_a_worker_left_broken_by_a_case_it_answered_is_replaced() -> None:
    """fault:stale_after_run answers a "corrupt" case right and then adds 1 to every later output of its process (as
    torch-ao-qnnpack's ConvTranspose3d leaves a heap it wrote past for the next case); the worker is replaced after
    each such case, so every case, the corrupting ones included, is judged right against the oracle."""
    from .helpers import run_on

    cases = [make_case(id=f"{name}", op="conv1d", in_channels=2, out_channels=3, input_size=6, kernel_size=3)
             for name in ("first", "corrupt_one", "second", "third", "corrupt_two", "fourth")]
    got = {r.case_id: r.status for r in run_on(cases, ["fault:stale_after_run"])}
    assert got == dict.fromkeys(("first", "corrupt_one", "second", "third", "corrupt_two", "fourth"), "pass"), got
