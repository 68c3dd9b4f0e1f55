"""Device selection: which targets a run gets, and that CUDA skips with a reason without a GPU."""

from __future__ import annotations

from harness.commands.selection import resolve_targets
from harness.execution.runner import run_cases
from harness.judge.verdict import Verdicts

from .helpers import make_case


def test_device_all_pairs_each_backend_with_the_devices_it_declares():
    targets = resolve_targets(["torch", "fault:nan"], "all")
    assert targets == [("torch", "cpu"), ("torch", "cuda"), ("fault:nan", "cpu")]
    assert resolve_targets(["torch"], "cuda") == [("torch", "cuda")]
    assert resolve_targets(["fault:nan"], "cuda") == []


def test_cuda_without_a_gpu_is_skipped_with_a_reason_and_cpu_still_runs():
    case = make_case(id="d", op="conv2d", in_channels=2, out_channels=2, input_size=5, kernel_size=3)
    records = []
    info = run_cases([case], [("torch", "cpu"), ("torch", "cuda")], records.append, Verdicts())
    assert (records[0].backend, records[0].device, records[0].status) == ("torch", "cpu", "pass")
    if "torch-cuda" in info.skipped:  # no GPU here: a skip with its reason, no records
        assert "no CUDA device" in info.skipped["torch-cuda"]
        assert len(records) == 1
    else:  # a GPU: the CUDA path ran, TF32 off by default
        assert info.fingerprints["torch-cuda"]["tf32"] == "False"
        assert [r.status for r in records] == ["pass", "pass"]


def test_a_cuda_worker_is_a_fresh_interpreter_where_a_gpu_is(monkeypatch):
    """CUDA does not survive a fork, and torch marks the forks of a process that asked for the device count
    as unable to initialize CUDA (torch-inductor-cuda's setup failed so, forked from its template, on an
    H200): where a GPU is (here: said to be), a CUDA worker starts as a fresh interpreter and asks for no
    template; a CPU worker forks."""
    from harness.execution import pool
    from harness.execution.preloads import preload
    from harness.execution.zygote import Forked

    monkeypatch.setattr(pool, "gpu_present", lambda: True)
    asked: list[tuple[str, ...]] = []
    real = pool.zygote_of
    monkeypatch.setattr(pool, "zygote_of", lambda backend: asked.append(preload(backend)) or real(backend))
    cuda, cpu = pool.Worker("torch", "cuda"), pool.Worker("torch", "cpu")
    try:
        cuda.launch()
        assert not asked and not isinstance(cuda.proc, Forked)
        cpu.launch()
        assert asked == [preload("torch")]
        assert cuda.ready() or "no CUDA device" in str(cuda.reason)  # no GPU here: a skip with its reason
        assert cpu.ready()
    finally:
        cuda.stop()
        cpu.stop()
