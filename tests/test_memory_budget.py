"""A worker beyond its memory budget retires after its answer and a fresh one goes on (harness/execution/memory.py)."""

from __future__ import annotations

import itertools

import pytest

from harness.execution import memory
from harness.execution.runner import run_cases
from harness.judge.verdict import Verdicts

from .helpers import make_case


def test_the_budget_is_a_share_of_the_available_memory_or_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.ENV, raising=False)
    assert memory.budget_mb(34) == 0  # unset: none
    monkeypatch.setenv(memory.ENV, memory.AUTO)
    available = memory._meminfo_mb("MemAvailable")
    if available is None:
        pytest.skip("no /proc/meminfo here: no budget is set")
    # the controller's peak comes off first, and each zygote counts as a worker
    share = memory.WORKER_SHARE * (available - memory.CONTROLLER_MB)
    assert memory.budget_mb(34) == max(int(share / 34), memory.MIN_MB)
    assert memory.budget_mb(34, 16) == max(int(share / 50), memory.MIN_MB)
    assert memory.budget_mb(1) >= memory.budget_mb(34) >= memory.budget_mb(34, 16) >= memory.MIN_MB
    monkeypatch.setenv(memory.ENV, "0")
    assert memory.budget_mb(34) == 0 and memory.set_budget(34) == 0 and memory.worker_env() == {}
    monkeypatch.setenv(memory.ENV, "700")
    assert memory.set_budget(34) == 700 and memory.worker_env() == {memory.ENV: "700"}
    monkeypatch.setenv(memory.ENV, "lots")
    assert memory.budget_mb(34) == 0


def test_a_worker_over_its_budget_retires_after_each_answer_and_the_answers_stand(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a budget of 1 MB a torch worker is over it once its first case has grown it by more than half a MB
    (its first conv allocates far more): it retires after that answer, which is kept (checked against the float64
    oracle), and the next case goes to a fresh worker; without a budget none retires."""
    if memory.own_pss_mb() is None:
        pytest.skip("no /proc/self/smaps_rollup here: a worker cannot measure itself")
    cases = [make_case(id=f"c{i}", op="conv2d", in_channels=2, out_channels=3, input_size=5 + i, kernel_size=3)
             for i in range(3)]
    for budget in ("1", "0"):
        monkeypatch.setenv(memory.ENV, budget)
        records: list = []
        info = run_cases(cases, [("torch", "cpu")], records.append, Verdicts(None), timeout=120.0)
        assert sorted((r.case_id, r.status) for r in records) == [(c.id, "pass") for c in cases]
        retires = info.memory_retires.get("torch-cpu", 0)
        assert (1 <= retires <= len(cases)) if budget == "1" else info.memory_retires == {}


def test_short_of_memory_the_controller_retires_its_largest_worker_and_the_answers_stand(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A floor above the machine's memory: after every case the controller retires its largest worker (here its
    only one) and the cases it had queued run again on a fresh one, each answer checked against the float64
    oracle; with the floor at 0, or with no budget set (the floor comes with it), none retires."""
    if memory.pss_mb("self") is None or memory._meminfo_mb("MemTotal") is None:
        pytest.skip("no /proc here: the controller cannot measure the machine or its workers")
    cases = [make_case(id=f"c{i}", op="conv2d", in_channels=2, out_channels=3, input_size=5 + i, kernel_size=3)
             for i in range(3)]
    for budget, floor in (("100000", str(1 << 40)), ("100000", "0"), ("0", str(1 << 40))):
        monkeypatch.setenv(memory.ENV, budget)  # far above what a worker takes: only the controller retires one
        monkeypatch.setenv(memory.FLOOR_ENV, floor)
        records: list = []
        info = run_cases(cases, [("torch", "cpu")], records.append, Verdicts(None), timeout=120.0)
        assert sorted((r.case_id, r.status) for r in records) == [(c.id, "pass") for c in cases]
        retires = info.memory_retires.get("torch-cpu", 0)
        assert retires == len(cases) if floor != "0" and budget != "0" else info.memory_retires == {}


def test_targets_that_do_not_fit_together_run_in_waves_and_a_family_stays_in_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """memory.target_waves: no waves without a budget; with one, at most CONVDIFF_TARGETS_AT_ONCE a wave, as even as
    that allows, a family (what the zygote imports) kept together where it fits."""
    targets = [("tvm", "cpu"), ("torch", "cpu"), ("tvm-bound", "cpu"), ("torch-inductor", "cpu"), ("jax", "cpu")]
    family = {"tvm": "t", "tvm-bound": "t", "torch": "p", "torch-inductor": "p", "jax": "j"}.__getitem__
    monkeypatch.delenv(memory.ENV, raising=False)
    monkeypatch.setenv(memory.WAVE_ENV, "2")  # an explicit count wins
    assert [len(w) for w in memory.target_waves(targets, family)] == [2, 2, 1]
    monkeypatch.delenv(memory.WAVE_ENV)
    assert memory.target_waves(targets, family) == [targets]  # no budget: one wave, in the given order
    monkeypatch.setenv(memory.WAVE_ENV, "4")  # 5 targets at 4 a wave: 3 and 2, not 4 and 1
    waves = memory.target_waves(targets, family)
    assert sorted(map(len, waves)) == [2, 3] and sorted(t for w in waves for t in w) == sorted(targets)
    assert all(len({i for i, w in enumerate(waves) for b, _ in w if family(b) == f}) == 1 for f in "jpt")
    monkeypatch.setenv(memory.WAVE_ENV, "1")  # a family larger than a wave is split
    assert sorted(map(len, memory.target_waves(targets, family))) == [1] * 5


def test_a_run_in_waves_gives_every_answer_one_target_after_the_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """One target a wave: the records of one target all come before the other's (in one wave they alternate case
    by case), and each is checked against the float64 oracle."""
    cases = [make_case(id=f"c{i}", op="conv2d", in_channels=2, out_channels=3, input_size=5 + i, kernel_size=3)
             for i in range(3)]
    targets = [("torch", "cpu"), ("onnxruntime", "cpu")]
    monkeypatch.setenv(memory.FLOOR_ENV, "0")
    for at_once in ("1", "2"):
        monkeypatch.setenv(memory.WAVE_ENV, at_once)
        records: list = []
        run_cases(cases, targets, records.append, Verdicts(None), timeout=120.0)
        assert sorted((r.case_id, r.backend, r.status) for r in records) == sorted(
            (c.id, b, "pass") for c in cases for b, _ in targets)
        order = [r.backend for r in records]
        changes = sum(a != b for a, b in itertools.pairwise(order))
        assert changes == 1 if at_once == "1" else changes == 2 * len(cases) - 1
