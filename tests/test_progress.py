"""Progress off a terminal: periodic plain lines with per-target counts, elapsed and ETA."""

from __future__ import annotations

import io

from harness.execution.progress import Progress, eta_s


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_eta_is_the_mean_rate_so_far() -> None:
    assert eta_s(0, 10, 5.0) is None
    assert eta_s(2, 10, 4.0) == 16.0  # 2 s per result, 8 left
    assert eta_s(10, 10, 7.0) == 0.0


def test_plain_lines_at_each_tenth_with_counts_and_eta() -> None:
    stream, clock = io.StringIO(), FakeClock()
    progress = Progress({"torch-cpu": 10, "tvm-cpu": 10}, stream=stream, every=1e9, clock=clock)
    assert progress.bars is None  # a StringIO is no terminal: no rich live display
    for i in range(10):
        clock.t += 1.0
        progress.update("pass", "torch-cpu")
        clock.t += 1.0
        progress.update("mismatch" if i == 0 else "pass", "tvm-cpu")
    progress.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10  # one per tenth of the 20 results, none in between
    assert "\x1b" not in stream.getvalue()  # no control sequences in a log
    # after 2 results (2 s): each target 1/10 done, at 2 s per result -> 18 s left
    assert lines[0] == "[0:02 elapsed, eta 0:18] torch-cpu 1/10 (pass=1); tvm-cpu 1/10 (mismatch=1)"
    assert lines[-1] == "[0:20 elapsed, eta 0:00] torch-cpu 10/10 (pass=10); tvm-cpu 10/10 (mismatch=1 pass=9)"


def test_a_quiet_stretch_still_prints_every_period() -> None:
    """A slow cold compile: results trickle in, a line at least every `every` seconds."""
    stream, clock = io.StringIO(), FakeClock()
    progress = Progress(1000, stream=stream, every=30.0, clock=clock)
    for _ in range(5):
        clock.t += 31.0
        progress.update("pass")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 5
    assert lines[-1].startswith("[2:35 elapsed, eta 8:34:05] all 5/1000 (pass=5)")


def test_an_unannounced_target_gets_its_own_count() -> None:
    stream = io.StringIO()
    progress = Progress({"a-cpu": 1}, stream=stream, clock=FakeClock())
    progress.update("pass", "b-cpu")
    assert "b-cpu 1/1 (pass=1)" in progress.line()
