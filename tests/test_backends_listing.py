"""`convdiff backends` lists from metadata (entry points, distribution versions, find_spec) without starting a
worker; `--live` starts one per backend and device, as a run does."""

from __future__ import annotations

import pytest

from harness.commands.cli import main
from harness.execution import pool


def test_the_listing_starts_no_worker(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def started(*args, **kwargs):
        raise AssertionError("convdiff backends started a worker")

    monkeypatch.setattr(pool.Worker, "__init__", started)
    assert main(["backends", "--backends", "torch,fault:nan"]) == 0
    out = capsys.readouterr().out
    torch = next(line for line in out.splitlines() if line.startswith("torch "))
    assert "[convdiff " in torch and torch.endswith("installed; declares cpu, cuda")
    assert "--live starts each worker" in out


def test_live_starts_each_worker(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--backends", "fault:nan", "--live"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("fault:nan "))
    assert line.endswith("cpu: yes")
