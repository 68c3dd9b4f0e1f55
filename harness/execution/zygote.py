"""Workers forked from a template process that has already imported their framework.

A worker's fixed cost is its framework's import (torch 2 s of CPU, TensorFlow 4 s, TVM 3.5 s on 2 cores),
paid again by every worker of the same framework (torch, torch-inductor, the four torch.ao engines,
torch-pt2e, the mutants) and by every restart after a crash. A zygote imports the framework once; each
worker is then a fork of it, ready in milliseconds, that imports nothing more and runs the worker's own
`main` (harness/execution/worker.py) on the pipes the controller made. The worker is still a process of
its own: a crash kills it alone, and what it computes is what a fresh interpreter computes (the import
has no inputs; every case's state is set up after the fork).

Protocol: the controller and the zygote share a Unix socket. A request is a pickled
(backend, device, environment, cwd) with three descriptors attached (the worker's request pipe, its reply
pipe and its log); the zygote forks, the child takes the descriptors as its pipes and stdout/stderr, and
the zygote answers ("spawned", pid). When a child exits the zygote reaps it and sends ("exited", pid,
returncode), returncode as subprocess gives it (-N for a signal). The controller's `Forked` stands in for
subprocess.Popen (poll, wait, kill, pid), killing through a pidfd so that a reused pid is never hit.

A zygote is keyed by what it imported, the whole environment and the caller's CPU affinity: variables
such as TF_ENABLE_ONEDNN_OPTS, and the CPUs a process may use (XLA sizes its pool from them), are read
at import, so a worker is only forked from a zygote started under its own. The exceptions are convdiff's
own settings that only the worker reads, after the fork has given it the caller's environment
(RUNTIME_ONLY: the artifact cache, its write policy, batching, TF32, profiling): a test or a fuzz
campaign that changes one reuses the zygote instead of importing the framework again.
CONVDIFF_ZYGOTE=0 turns forking off (every worker a fresh interpreter, as before); a
zygote that fails to start, or whose child dies before greeting, makes its backends start fresh.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ZYGOTE_ENV = "CONVDIFF_ZYGOTE"  # 0 or off: every worker starts as a fresh interpreter
START_TIMEOUT_S = 300.0
EXITED_WAIT_S = 2.0  # after the process is gone, how long its status may take to arrive


def enabled() -> bool:
    return os.environ.get(ZYGOTE_ENV, "1").lower() not in ("0", "off", "no")


# ---- the zygote process ----------------------------------------------------------------------
def _send(sock: socket.socket, msg: Any) -> None:
    data = pickle.dumps(msg)
    sock.sendall(len(data).to_bytes(4, "little") + data)


def _child(sock: socket.socket, request: tuple, fds: list[int]) -> None:
    backend, device, env, cwd = request
    code = 1
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        to_worker, from_worker, log = fds
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        from harness.execution.worker import main

        main([backend, device, str(to_worker), str(from_worker)])
        code = 0
    except BaseException:  # noqa: BLE001 - the controller sees the status and the log
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def imports_quiet(timeout: float = 30.0) -> bool:
    """Wait until no other thread of this process is inside an import. A framework may leave a thread
    working after its import (OpenVINO sends a telemetry event from a ThreadPoolExecutor): a fork made
    while that thread holds a module's import lock inherits the lock held by a thread that does not
    exist in the child, and the child's first import of that module waits forever (seen: a worker
    stuck importing multiprocessing.util until the 300 s start deadline, then started fresh)."""
    me = threading.get_ident()
    deadline = time.monotonic() + timeout
    while True:
        locks = [ref() for ref in list(getattr(importlib._bootstrap, "_module_locks", {}).values())]
        if not any(lk is not None and getattr(lk, "count", 0) and getattr(lk, "owner", me) != me for lk in locks):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        with contextlib.suppress(OSError):  # the controller may have closed the socket already
            _send(sock, ("exited", pid, code))


def serve(sock_fd: int, cpus: set[int], modules: list[str]) -> None:
    """`python -m harness.execution.zygote FD CPUS MODULE...`: import, greet, then fork on request.

    CPUS (comma-separated) is the affinity of the thread that asked for the zygote, set before any
    import: a fresh interpreter inherits its launcher's, and frameworks size their pools from it at
    import (XLA's CPU client does), so a worker forked from here sees what a fresh one would."""
    from harness.execution.worker import die_with_parent

    os.sched_setaffinity(0, cpus)
    die_with_parent()  # and each child dies with this process (its own die_with_parent)
    sock = socket.socket(fileno=sock_fd)
    failed = {}
    # multiprocessing.connection: what worker.main imports first, so that no fork has to import it
    for name in ["harness.execution.worker", "backends.registry", "multiprocessing.connection", *modules]:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the worker will meet it again and report it
            failed[name] = f"{type(exc).__name__}: {exc}"[:200]
    _send(sock, ("ready", failed))
    buffer, fds = b"", []
    while True:
        readable, _, _ = select.select([sock], [], [], 0.05)
        _reap(sock)
        if not readable:
            continue
        data, more, _, _ = socket.recv_fds(sock, 1 << 16, 3)
        if not data:  # the controller is done (or gone): reap what has exited, then leave
            time.sleep(0.05)
            _reap(sock)
            return
        buffer, fds = buffer + data, fds + list(more)
        while len(buffer) >= 4 and len(buffer) >= 4 + int.from_bytes(buffer[:4], "little"):
            size = int.from_bytes(buffer[:4], "little")
            request, buffer = pickle.loads(buffer[4:4 + size]), buffer[4 + size:]
            mine, fds = fds[:3], fds[3:]
            imports_quiet()
            pid = os.fork()
            if pid == 0:
                _child(sock, request, mine)
            for fd in mine:
                os.close(fd)
            _send(sock, ("spawned", pid))


# ---- the controller's side -------------------------------------------------------------------
class Zygote:
    """One template process (the controller's child) and the statuses of the workers it forked."""

    def __init__(self, modules: tuple[str, ...], cpus: frozenset[int]) -> None:
        self.modules = modules
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.execution.zygote", str(theirs.fileno()),
             ",".join(map(str, sorted(cpus))), *modules],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=os.getcwd(), env={**os.environ, "PYTHONUNBUFFERED": "1"})
        theirs.close()
        self.sock = mine
        self.lock = threading.Lock()   # one request at a time
        self.changed = threading.Condition()
        self.spawned: list[int] = []
        self.exited: dict[int, int] = {}
        self.ok: bool | None = None  # None until greeted
        self.alive = True
        threading.Thread(target=self._read, daemon=True, name=f"zygote-{'+'.join(modules)}").start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buffer += data
            while len(buffer) >= 4 and len(buffer) >= 4 + int.from_bytes(buffer[:4], "little"):
                size = int.from_bytes(buffer[:4], "little")
                msg, buffer = pickle.loads(buffer[4:4 + size]), buffer[4 + size:]
                with self.changed:
                    if msg[0] == "ready":
                        self.ok = True
                    elif msg[0] == "spawned":
                        self.spawned.append(msg[1])
                    elif msg[0] == "exited":
                        self.exited[msg[1]] = msg[2]
                    self.changed.notify_all()
        with self.changed:
            self.alive, self.ok = False, bool(self.ok)
            self.changed.notify_all()

    def ready(self) -> bool:
        with self.changed:
            self.changed.wait_for(lambda: self.ok is not None, timeout=START_TIMEOUT_S)
            return bool(self.ok) and self.alive

    def fork(self, backend: str, device: str, fds: tuple[int, int, int], env: dict[str, str]) -> Forked | None:
        """A worker process forked from this zygote, or None (the zygote is gone)."""
        if not self.ready():
            return None
        with self.lock:
            data = pickle.dumps((backend, device, env, os.getcwd()))
            with self.changed:
                before = len(self.spawned)
            try:
                socket.send_fds(self.sock, [len(data).to_bytes(4, "little") + data], list(fds))
            except OSError:
                return None
            with self.changed:
                self.changed.wait_for(lambda: len(self.spawned) > before or not self.alive, timeout=30.0)
                if len(self.spawned) <= before:
                    return None
                pid = self.spawned[before]
        return Forked(self, pid)

    def status(self, pid: int) -> int | None:
        with self.changed:
            return self.exited.get(pid)

    def wait_status(self, pid: int, timeout: float) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exited or not self.alive, timeout=timeout)
            return self.exited.get(pid)

    def close(self) -> None:
        """Close the socket (the zygote then reaps its last children and exits), then wait for it."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Forked:
    """subprocess.Popen's part that pool.Worker uses, for a worker forked by a zygote."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
        except (OSError, AttributeError):
            self.pidfd = None

    def _gone(self) -> bool:
        """The process has exited (whether or not its status has arrived)."""
        if self.pidfd is not None:
            return bool(select.select([self.pidfd], [], [], 0)[0])
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        return False

    def poll(self) -> int | None:
        if self.returncode is None:
            code = self.zygote.status(self.pid)
            if code is None and self._gone():
                code = self.zygote.wait_status(self.pid, EXITED_WAIT_S)
                if code is None:
                    code = -signal.SIGKILL  # the zygote died with it: no status to tell
            if code is not None:
                self.returncode = code
                self._close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            if self.pidfd is not None:
                left = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
                select.select([self.pidfd], [], [], left)
            else:
                time.sleep(0.02)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.returncode is not None:
            return
        with contextlib.suppress(OSError):
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)

    def _close(self) -> None:
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None


_ZYGOTES: dict[tuple, Zygote] = {}
_LOCK = threading.Lock()
# Zygotes are started from this one long-lived thread: a zygote dies with the thread that started it
# (PR_SET_PDEATHSIG is per thread), and a lane's thread ends with its run.
_STARTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zygote-starter")


# convdiff's variables that nothing reads at import: the worker reads them at run time (backends/artifacts.py,
# backends/tvm/cache.py, backends/torch_inductor.py, the TF32 switches, worker.py's profiler)
RUNTIME_ONLY = frozenset({"CONVDIFF_CACHE", "CONVDIFF_CACHE_WRITE", "CONVDIFF_BATCH", "CONVDIFF_TF32",
                          "CONVDIFF_PROFILE"})


def environment_key(ignore: frozenset[str] = frozenset()) -> int:
    """What a process starts under: the environment, less pytest's per-test bookkeeping (PYTEST_*) and
    `ignore`, and the calling thread's CPU affinity (which a launched process inherits). A zygote ignores
    RUNTIME_ONLY; a warm worker (pool.WarmPool) does not: its setup has read them."""
    env = tuple(sorted((k, v) for k, v in os.environ.items() if not k.startswith("PYTEST_") and k not in ignore))
    return hash((env, frozenset(os.sched_getaffinity(0))))


def zygote_for(modules: tuple[str, ...]) -> Zygote | None:
    """This process's zygote for `modules` under the current environment, started on first use."""
    if not modules or not enabled():
        return None
    key = (modules, environment_key(RUNTIME_ONLY))
    cpus = frozenset(os.sched_getaffinity(0))  # the caller's; the starter thread's may differ
    with _LOCK:
        if not _ZYGOTES:
            atexit.register(close_all)
        z = _ZYGOTES.get(key)
        if z is None or not z.alive:
            try:
                z = _ZYGOTES[key] = _STARTER.submit(Zygote, modules, cpus).result()
            except OSError:
                return None
    return z


def close_all() -> None:
    with _LOCK:
        zygotes = list(_ZYGOTES.values())
        _ZYGOTES.clear()
    for z in zygotes:
        z.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]), {int(c) for c in sys.argv[2].split(",")}, sys.argv[3:])
