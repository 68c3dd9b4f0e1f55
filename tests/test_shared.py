"""An xdist session's processes share their templates (harness/execution/shared.py).

Each "process of the session" here is a real subprocess (tests/shared_client.py) or this process,
given a session directory whose owner is a stand-in controller (a `sleep`): one zygote and one script
server serve them all, a client's workers die when that client goes, and everything the session
started leaves when its controller exits.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.execution import shared

ROOT = Path(__file__).resolve().parents[1]


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def wait_until(check, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, subprocess.Popen]]:
    """A session directory owned by a stand-in controller, adopted by this process."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to follow the processes")
    owner = subprocess.Popen(["sleep", "600"])
    path = Path(tempfile.mkdtemp(prefix="cds-", dir="/tmp" if Path("/tmp").is_dir() else None))  # short: socket paths
    (path / shared.OWNER_FILE).write_text(str(owner.pid))
    monkeypatch.setattr(shared, "_ADOPTED", [path])
    yield path, owner
    owner.kill()
    owner.wait()
    shutil.rmtree(path, ignore_errors=True)


def client(path: Path) -> subprocess.Popen:
    """Another process of the session: it starts a fault:nan worker and prints its pid, then waits."""
    code = ("import os, sys; from harness.execution import shared; shared.adopt()\n"
            "from harness.execution.pool import Worker\n"
            "w = Worker('fault:nan', 'cpu'); assert w.ready()\n"
            "print(w.proc.pid, flush=True); sys.stdin.read()\n")
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**_env(), shared.SHARED_ENV: str(path)})


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != shared.SHARED_ENV}


def test_the_processes_of_a_session_fork_from_one_zygote(session: tuple[Path, subprocess.Popen]) -> None:
    path, owner = session
    first, second = client(path), client(path)
    try:
        workers = [int(first.stdout.readline()), int(second.stdout.readline())]  # type: ignore[union-attr]
        zygotes = {parent(w) for w in workers}
        assert len(zygotes) == 1 and not zygotes & {first.pid, second.pid}  # one template, neither client's child
        assert len(list(path.glob("zygote-*.sock"))) == 1
        first.kill()  # a client that dies takes its workers with it, not the other's
        first.wait()
        assert wait_until(lambda: not alive(workers[0])), "the dead client's worker outlived it"
        assert alive(workers[1])
        owner.kill()  # the controller exits: the template leaves, and the workers it forked with it
        owner.wait()
        assert wait_until(lambda: not any(alive(p) for p in [*zygotes, workers[1]]))
    finally:
        for proc in (first, second):
            proc.kill()
            proc.wait()


def test_the_processes_of_a_session_share_a_script_server(session: tuple[Path, subprocess.Popen], tmp_path: Path) -> None:
    """Two clients' scripts run in forks of one server (the same parent), each alone with its own exit code."""
    from tests.helpers import _ScriptServer

    _, owner = session
    script = tmp_path / "s.py"
    script.write_text("import json, os, sys\nprint(os.getppid())\nsys.exit(int(sys.argv[0][-4]) + 3)\n")
    parents = []
    for n in range(2):
        run = tmp_path / f"r{n}.py"
        run.write_text(script.read_text())
        jobs = tmp_path / f"jobs{n}.json"
        jobs.write_text(json.dumps([{"path": str(run), "out": f"{run}.out"}]))
        assert _ScriptServer(("json",)).run(jobs, 60) == {0: n + 3}  # r0.py exits 3, r1.py exits 4
        parents.append(int(Path(f"{run}.out").read_text()))
    assert parents[0] == parents[1] and alive(parents[0])
    owner.kill()
    owner.wait()
    assert wait_until(lambda: not alive(parents[0])), "the script server outlived the session"


def test_outside_a_session_nothing_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory whose controller is gone (or none) is neither adopted nor inherited."""
    monkeypatch.setattr(shared, "_ADOPTED", [])
    monkeypatch.setenv(shared.SHARED_ENV, "/nonexistent")
    assert shared.directory() is None and shared.inherited() is None
    shared.adopt()
    assert shared.directory() is None


def test_a_process_a_test_starts_joins_a_running_zygote_and_starts_none(
        session: tuple[Path, subprocess.Popen]) -> None:
    """A process that inherits the session (a convdiff run, a nested pytest) but did not adopt it forks
    from the session's zygote when one runs for its key, and otherwise from a private one of its own."""
    path, _ = session
    code = ("import sys\nfrom harness.execution.pool import Worker\n"
            "w = Worker('fault:nan', 'cpu'); assert w.ready()\nprint(w.proc.pid, flush=True); sys.stdin.read()\n")
    env = {**_env(), shared.SHARED_ENV: str(path)}
    procs = [client(path)]  # adopts the directory: starts the session's zygote
    try:
        worker = int(procs[0].stdout.readline())  # type: ignore[union-attr]
        procs.append(subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, env=env))
        joined = int(procs[1].stdout.readline())  # type: ignore[union-attr]
        assert parent(joined) == parent(worker) != procs[1].pid  # forked by the session's zygote
        procs.append(subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True,
                                      env={**env, "CONVDIFF_TEST_KEY": "another environment"}))
        own = int(procs[2].stdout.readline())  # type: ignore[union-attr]
        assert parent(parent(own)) == procs[2].pid  # no session zygote for its key: a private one, its child
        assert len(list(path.glob("zygote-*.sock"))) == 1  # and it started none in the session
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
