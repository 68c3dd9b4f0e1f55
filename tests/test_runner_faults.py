"""A crashing, hanging or lying backend costs exactly its own results; everything else completes."""

from __future__ import annotations

import json

import pytest

from harness.commands.cli import main
from harness.execution.runner import run_cases
from harness.judge.verdict import Verdicts

from .helpers import make_case

CASES = [
    make_case(id=f"f{i}", op=op, in_channels=2, out_channels=2, input_size=6, kernel_size=3, stride=2)
    for i, op in enumerate(["conv1d", "conv_transpose2d", "conv3d"])
]

EXPECTED = {
    "segfault": ("crash", "SIGSEGV"),
    "abort": ("crash", "SIGABRT"),
    "hang": ("timeout", "no result after"),
    "exception": ("error", "injected fault: adapter raised (raised in the adapter's code, at "),
    # a resource blow-up is a failure, never a refusal, though the adapter wrapped it in Rejected
    "oom": ("crash", "MemoryError: Unable to allocate 4.00 EiB"),
    "wrong_shape": ("shape_mismatch", "output shape"),
    "nan": ("mismatch", "NaN"),
}


# fault:hang waits out 1.5 s on each case twice (the retry): 9.4 s of make test's 488.6 s (2026-12-02, 2-core AMD EPYC
# Zen 5); its timeout record, and the cases after a hang still running, are test_a_timeout_is_retried_once_on_a_fresh_worker's
HANG = pytest.mark.nightly("waits out two timeouts a case; make test's test_a_timeout_is_retried_once_on_a_fresh_worker "
                           "runs fault:hang on two cases")


@pytest.mark.parametrize("mode", [pytest.param(m, marks=HANG) if m == "hang" else m for m in EXPECTED])
def test_fault_is_recorded_and_the_run_goes_on(mode):
    records = []
    run_cases(CASES, [("fault:" + mode, "cpu"), ("torch", "cpu")], records.append, Verdicts(), timeout=1.5)
    status, text = EXPECTED[mode]
    faulty = [r for r in records if r.backend.startswith("fault")]
    torch = [r for r in records if r.backend == "torch"]
    assert [r.case_id for r in faulty] == [c.id for c in CASES]  # later cases still ran on the faulty backend
    assert all(r.status == status and text in r.message for r in faulty), [(r.status, r.message) for r in faulty]
    assert [r.status for r in torch] == ["pass"] * len(CASES)
    assert all(r.error_origin == ("adapter" if status == "error" else None) for r in faulty)


def test_cli_run_with_segfault_backend(tmp_path):
    """`convdiff run --backends torch,fault:segfault`: crash results, every torch result present, exit 1."""
    case_file = tmp_path / "cases" / "few.yaml"
    case_file.parent.mkdir()
    case_file.write_text(
        "defaults:\n  op: conv2d\n  in_channels: 2\n  out_channels: 3\n  input_size: 5\n  kernel_size: 3\n"
        "cases:\n  - id: a\n  - id: b\n    stride: 2\n  - id: c\n    padding: same\n"
    )
    out = tmp_path / "out"
    rc = main(["run", str(case_file), "--backends", "torch,fault:segfault", "--out", str(out), "--timeout", "20"])
    assert rc == 1
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by = {(r["backend"], r["case_id"]): r["status"] for r in records}
    assert by == {**{("torch", k): "pass" for k in "abc"}, **{("fault:segfault", k): "crash" for k in "abc"}}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unexpected"] == 3 and summary["counts"]["fault:segfault-cpu"] == {"crash": 3}
    assert (out / "junit.xml").exists()


def test_controller_never_imports_a_framework():
    """Frameworks live in workers only (importing TF then paddle in one process segfaults)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from harness.execution.runner import run_cases\n"
        "from harness.judge.verdict import Verdicts\n"
        "from tests.helpers import make_case\n"
        "c = make_case(id='a', op='conv2d', in_channels=2, out_channels=2, input_size=5, kernel_size=3)\n"
        "recs = []\n"
        "run_cases([c], [('torch', 'cpu')], recs.append, Verdicts())\n"
        "assert recs[0].status == 'pass', recs[0]\n"
        "print(sorted(m for m in ('torch', 'tensorflow', 'paddle', 'tvm') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def _children(pid: int) -> set[int]:
    """Every descendant: the workers, whether the controller started them or a zygote forked them."""
    from pathlib import Path

    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:  # the task ended meanwhile
            continue
    return kids | {k for kid in kids for k in _children(kid)}


def test_killed_run_keeps_whole_lines_and_leaves_no_worker(tmp_path):
    """SIGKILL the controller mid-run: every line written parses, and its workers exit by themselves."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    if not Path("/proc/self/task").exists():
        pytest.skip("needs /proc to find the workers")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "CONVDIFF_SHARED_DIR"}  # private zygotes: its descendants
    proc = subprocess.Popen([sys.executable, "-m", "harness.commands.cli", "run", "cases/conv2d.yaml", "cases/conv3d.yaml",
                             "--backends", "fault:hang,torch", "--timeout", "1", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    results = out / "results.jsonl"
    # a hung case waits out its 1 s timeout twice (the retry on a fresh worker): 3 lines in ~5 s (5 lines and
    # a 2 s timeout took 15 s of make test, 2026-11-29, 2-core AMD EPYC Zen 4, for the same check)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < 3):
        time.sleep(0.1)
    workers = _children(proc.pid)
    assert workers, "no worker started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lines = results.read_text().splitlines()
    assert len(lines) >= 3 and all(json.loads(ln)["case_id"] for ln in lines)
    deadline = time.monotonic() + 60   # a worker notices its closed pipe when it next reads
    while time.monotonic() < deadline and any(Path(f"/proc/{w}").exists() and
                                              "Z" not in Path(f"/proc/{w}/stat").read_text().split()[2] for w in workers):
        time.sleep(0.2)
    alive = [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in Path(f"/proc/{w}/stat").read_text().split()[2]]
    assert not alive, f"orphaned workers: {alive}"


def test_after_a_crash_a_spare_worker_takes_the_next_case_and_stop_ends_it():
    """Cheap crashes: from the first restart on, a spare process waits beside the live one; the
    next crash adopts it (it runs the next case) and a new spare is started; stop ends both."""
    from pathlib import Path

    from harness.execution.pool import Worker
    from harness.numerics.inputs import make_inputs

    def alive(pid: int) -> bool:
        stat = Path(f"/proc/{pid}/stat")
        return stat.exists() and stat.read_text().split()[2] != "Z"

    w = Worker("fault:segfault", "cpu")
    assert w.ready() and w.spare is None  # a backend that never crashed pays for no spare
    try:
        for case in CASES:
            w.submit(case, make_inputs(case))
        assert w.collect(30)["status"] == "crash" and w.spare is None
        assert w.collect(30)["status"] == "crash"  # ran on a fresh process; a spare now waits
        assert w.spare is not None
        spare = w.spare[0].pid
        assert w.collect(30)["status"] == "crash"  # ran on the spare: adopted, crashed
        assert not alive(spare)  # the spare was the process that ran the case, and died
        assert w.spare is not None and w.spare[0].pid != spare and w.restarts == 2
        last = w.spare[0].pid
    finally:
        w.stop()
    assert w.spare is None and not alive(last)


def test_a_timeout_is_retried_once_on_a_fresh_worker(tmp_path, monkeypatch):
    """A stall that does not come back (`fault:hang_once`) passes on the retry; a real hang times out twice
    and its record says so, with the machine's load."""
    monkeypatch.setenv("CONVDIFF_FAULT_STATE", str(tmp_path))
    records = []
    run_cases(CASES[:2], [("fault:hang_once", "cpu"), ("fault:hang", "cpu")], records.append, Verdicts(), timeout=1.5)
    by = {(r.backend, r.case_id): r for r in records}
    assert [by["fault:hang_once", c.id].status for c in CASES[:2]] == ["pass", "pass"]
    hung = [by["fault:hang", c.id] for c in CASES[:2]]
    assert all(r.status == "timeout" and "twice, the second time on a fresh worker" in r.message for r in hung)
    assert all(isinstance(r.load, float) and r.load >= 0 for r in hung)
