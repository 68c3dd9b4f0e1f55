"""Workers forked from a template process that has already imported their framework.

A worker's fixed cost is its framework's import (torch 2 s of CPU, TensorFlow 4 s, TVM 3.5 s on 2 cores),
paid again by every worker of the same framework (torch, torch-inductor, the four torch.ao engines,
torch-pt2e, the mutants) and by every restart after a crash. A zygote imports the framework once; each
worker is then a fork of it, ready in milliseconds, that imports nothing more and runs the worker's own
`main` (harness/execution/worker.py) on the pipes the controller made. The worker is still a process of
its own: a crash kills it alone, and what it computes is what a fresh interpreter computes (the import
has no inputs; every case's state is set up after the fork).

The zygote's process is harness/execution/zygote_server.py. Under pytest-xdist the session's processes
share one zygote per key (harness/execution/shared.py): each connects to it instead of starting its own.

Protocol: the controller and the zygote share a Unix socket. A request is a pickled
("worker", backend, device, environment, cwd) with three descriptors attached (the worker's request pipe,
its reply pipe and its log); the zygote forks, the child takes the descriptors as its pipes and
stdout/stderr, and the zygote answers ("spawned", pid). A ("script", path, environment, cwd, args, module)
request, with one descriptor (its output file), forks a child that runs a standalone script as
`python path args...` would, or `python -m path args...` where `module` (harness/execution/scripts.py):
the tests run reproducer scripts so, and `convdiff extract` its framework probes inside an xdist session
(`session_zygote`), from the template their backend's workers fork from, instead of importing the same
frameworks again in a process of their own. When a
child exits the zygote reaps it and sends ("exited", pid, returncode), returncode as subprocess gives it
(-N for a signal). The controller's `Forked` stands in for
subprocess.Popen (poll, wait, kill, pid), killing through a pidfd so that a reused pid is never hit.

A zygote is keyed by what it imported, the whole environment and the caller's CPU affinity: variables
such as TF_ENABLE_ONEDNN_OPTS, and the CPUs a process may use (XLA sizes its pool from them), are read
at import, so a worker is only forked from a zygote started under its own. The exceptions are convdiff's
own settings that only the worker reads, after the fork has given it the caller's environment
(RUNTIME_ONLY: the artifact cache, its write policy, batching, TF32, profiling, the memory settings): a test or a fuzz
campaign that changes one reuses the zygote instead of importing the framework again.
CONVDIFF_ZYGOTE=0 turns forking off (every worker a fresh interpreter, as before); a
zygote that fails to start, or whose child dies before greeting, makes its backends start fresh.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.execution import shared

ZYGOTE_ENV = "CONVDIFF_ZYGOTE"  # 0 or off: every worker starts as a fresh interpreter
START_TIMEOUT_S = 300.0
EXITED_WAIT_S = 2.0  # after the process is gone, how long its status may take to arrive


# Set in each template's and worker's environment where the caller's environment does not set it: an OpenMP
# thread waiting for work sleeps at once instead of spinning first. A run keeps many workers busy on few cores
# (each target's, two OpenMP threads each by default on 2 cores), and a spinning thread holds a core that another
# worker's thread waits for: `convdiff selftest` (torch and 19 mutants over the smoke tier) used 27.2 CPU-s in
# 16.5-17.0 s, and 7.4-9.0 CPU-s in 7.3-7.5 s with this (2026-12-02, 2-core AMD EPYC Zen 4), the same records; a
# run of torch alone over bench/sweep620.yaml was no slower (3.3-3.8 s against 3.7-4.6 s). It decides how an idle
# thread waits, not how the work is split: the thread count, the kernels and the values stay the same (GNU's and
# LLVM/Intel's OpenMP runtimes read it when they load, that is at the framework's import in the template).
CHILD_DEFAULTS = {"OMP_WAIT_POLICY": "PASSIVE"}


def child_environment() -> dict[str, str]:
    """The environment a template or a fresh worker starts under: this process's, over CHILD_DEFAULTS."""
    return {**CHILD_DEFAULTS, **os.environ, "PYTHONUNBUFFERED": "1"}


def enabled() -> bool:
    return os.environ.get(ZYGOTE_ENV, "1").lower() not in ("0", "off", "no")


# ---- the controller's side -------------------------------------------------------------------
class Zygote:
    """One template process and the statuses of the workers it forked: the controller's child, or in an
    xdist session (`shared`: the session's directory) the one the session shares for these modules under
    this environment, started by whichever process asked first (harness/execution/shared.py); in a process
    a test started, the session's one if it already runs, else its own."""

    def __init__(self, modules: tuple[str, ...], cpus: frozenset[int], shared_dir: Path | None = None,
                 parent: Zygote | None = None) -> None:
        self.modules = modules
        self.proc: subprocess.Popen | Forked | None = None
        self.sock: socket.socket | None = None
        self.lock = threading.Lock()   # one request at a time
        self.changed = threading.Condition()
        self.spawned: list[int] = []
        self.exited: dict[int, int] = {}
        self.ok: bool | None = None  # None until greeted
        self.alive = True
        argv = [sys.executable, "-m", "harness.execution.zygote_server"]
        options: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
                                   "cwd": os.getcwd(), "env": child_environment()}
        affinity = ",".join(map(str, sorted(cpus)))
        key = shared_key(modules, cpus)
        if shared_dir is None and (found := shared.inherited()) is not None:  # a process a test started
            self.sock = shared.connect(found / f"{key}.sock")  # the session's zygote, if it runs

        def private() -> socket.socket:
            """A template of this process's own, on a socket pair: forked from `parent`, or where there is
            none (or it is gone) a fresh interpreter that imports every module."""
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            forked = parent.fork_template(cpus, modules, None, theirs.fileno()) if parent is not None else None
            if forked is None and parent is not None:  # a fresh pair: nothing the parent may still fork shares it
                mine.close()
                theirs.close()
                mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self.proc = forked or subprocess.Popen([*argv, str(theirs.fileno()), affinity, *modules],
                                                   pass_fds=(theirs.fileno(),), **options)
            theirs.close()
            return mine

        if self.sock is not None:
            connect = None
        elif shared_dir is None and parent is None:
            self.sock, connect = private(), None
        elif shared_dir is None:
            connect = private  # in the reader thread: the fork waits for the parent's import
        else:
            def start(path: Path) -> subprocess.Popen | Forked:
                forked = parent.fork_template(cpus, modules, str(path)) if parent is not None else None
                return forked or subprocess.Popen([*argv, "--listen", str(path), affinity, *modules],
                                                  start_new_session=True, **options)

            def connect() -> socket.socket | None:  # in the reader thread: a start waits for the import
                return shared.connect_or_start(shared_dir, key, start, lambda proc: proc.poll() is None,
                                               START_TIMEOUT_S)
        threading.Thread(target=self._read, args=(connect,), daemon=True, name=f"zygote-{'+'.join(modules)}").start()

    def _read(self, connect: Any) -> None:
        buffer = b""
        if connect is not None:
            self.sock = connect()
        while self.sock is not None:
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
        return self._fork(("worker", backend, device, env, os.getcwd()), list(fds))

    def fork_script(self, path: str, out_fd: int, env: dict[str, str], args: tuple[str, ...] = (),
                    module: bool = False) -> Forked | None:
        """A standalone script (a module, `python -m path`, where `module`) run as __main__ with `args` in a
        process forked from this zygote (stdout and stderr to `out_fd`; harness/execution/scripts.py), or
        None (the zygote is gone). Its exit status is the script's, as `python path` gives it."""
        return self._fork(("script", path, env, os.getcwd(), tuple(args), module), [out_fd])

    def fork_template(self, cpus: frozenset[int], modules: tuple[str, ...], listen_at: str | None,
                      sock_fd: int | None = None) -> Forked | None:
        """A template forked from this one (whose modules begin `modules`): it imports the rest and serves on
        `sock_fd`, or listens at `listen_at` (a shared one, which stays until the session ends); None: this
        zygote is gone."""
        return self._fork(("template", set(cpus), list(modules), listen_at), [] if listen_at else [sock_fd])

    def _fork(self, request: tuple, fds: list[int]) -> Forked | None:
        if not self.ready():
            return None
        with self.lock:
            data = pickle.dumps(request)
            with self.changed:
                before = len(self.spawned)
            try:
                socket.send_fds(self.sock, [len(data).to_bytes(4, "little") + data], fds)
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
        """Close the socket (the zygote then reaps its last children and exits; a shared one kills this
        process's workers and stays), then wait for a zygote of this process's own."""
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self.sock.close()
        if self.proc is None:
            return
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
# backends/tvm/cache.py, backends/torch/inductor.py, the TF32 switches, worker.py's profiler), or only the
# controller does (memory.py's floor and waves)
RUNTIME_ONLY = frozenset({"CONVDIFF_CACHE", "CONVDIFF_CACHE_WRITE", "CONVDIFF_BATCH", "CONVDIFF_TF32",
                          "CONVDIFF_PROFILE", "CONVDIFF_WORKER_MB", "CONVDIFF_MEMORY_FLOOR_MB",
                          "CONVDIFF_TARGETS_AT_ONCE"})


def _environment(ignore: frozenset[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if not k.startswith("PYTEST_") and k not in ignore))


def environment_key(ignore: frozenset[str] = frozenset()) -> int:
    """What a process starts under: the environment, less pytest's per-test bookkeeping (PYTEST_*) and
    `ignore`, and the calling thread's CPU affinity (which a launched process inherits). A zygote ignores
    RUNTIME_ONLY; a warm worker (warm_pool.WarmPool) does not: its setup has read them."""
    return hash((_environment(ignore), frozenset(os.sched_getaffinity(0))))


def shared_key(modules: tuple[str, ...], cpus: frozenset[int]) -> str:
    """The name an xdist session shares the zygote for `modules` under: what it imports, the environment it
    imports under, the CPUs it may use and the interpreter."""
    return shared.name("zygote", modules, _environment(RUNTIME_ONLY | {shared.SHARED_ENV}), sorted(cpus),
                       sys.executable)


def session_zygote(modules: tuple[str, ...], templates: Iterable[tuple[str, ...]] = ()) -> Zygote | None:
    """The zygote an xdist session shares for `modules`, for a one-off fork (`convdiff extract`'s probes):
    in one of the session's processes, started if none runs yet (its backends fork from it too); in a
    process a test started, only one the session already runs (a private one would cost the very import
    the fork saves); None outside a session."""
    if shared.directory() is None:
        found = shared.inherited()
        cpus = frozenset(os.sched_getaffinity(0))
        if found is None or not enabled() or not (found / f"{shared_key(modules, cpus)}.sock").exists():
            return None
    return zygote_for(modules, templates)


def parent_of(modules: tuple[str, ...], templates: Iterable[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The longest of `templates` whose modules begin `modules`, in order (blocked packages included): a
    template for `modules` forks from it and imports only the rest. In order, since the order of imports is
    part of what a process is (TensorFlow then paddle crashes; paddle then TensorFlow does not)."""
    found = [t for t in templates if 0 < len(t) < len(modules) and modules[:len(t)] == t]
    return max(found, key=len) if found else None


def zygote_for(modules: tuple[str, ...], templates: Iterable[tuple[str, ...]] = ()) -> Zygote | None:
    """This process's zygote for `modules` under the current environment, started on first use: forked from
    the zygote of the longest of `templates` it extends (parent_of), which is started too, else a fresh
    interpreter that imports them all."""
    if not modules or not enabled():
        return None
    templates = list(templates)
    base = parent_of(modules, templates)
    parent = zygote_for(base, templates) if base is not None else None
    key = (modules, environment_key(RUNTIME_ONLY))
    cpus = frozenset(os.sched_getaffinity(0))  # the caller's; the starter thread's may differ
    with _LOCK:
        if not _ZYGOTES:
            atexit.register(close_all)
        z = _ZYGOTES.get(key)
        if z is None or not z.alive:
            try:
                z = _ZYGOTES[key] = _STARTER.submit(Zygote, modules, cpus, shared.directory(), parent).result()
            except OSError:
                return None
    return z


def close_all() -> None:
    with _LOCK:
        zygotes = list(_ZYGOTES.values())
        _ZYGOTES.clear()
    for z in zygotes:
        z.close()
