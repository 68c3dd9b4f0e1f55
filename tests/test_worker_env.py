"""What a worker's process starts under (harness/execution/zygote.py `child_environment`)."""

from __future__ import annotations

import pytest

from harness.execution import zygote
from harness.execution.pool import Worker


def test_workers_wait_passively_unless_the_caller_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenMP threads of a worker sleep when idle (zygote.CHILD_DEFAULTS): the variable is in the environment the
    worker's process started under; a value of the caller's own is kept."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    w = Worker("torch", "cpu")
    try:
        assert w.ready(), w.reason
        with open(f"/proc/{w.proc.pid}/environ", "rb") as f:
            assert b"OMP_WAIT_POLICY=PASSIVE" in f.read().split(b"\0")
    finally:
        w.stop()
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert zygote.child_environment()["OMP_WAIT_POLICY"] == "ACTIVE"
