"""Controller side of a worker: start it, send a case, wait with a deadline, survive its death."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any

from harness.execution.host import gpu_present
from harness.execution.memory import worker_env
from harness.execution.preloads import zygote_of
from harness.execution.worker import unsupported
from harness.execution.zygote import Forked, child_environment
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def run_message(case: Case, inputs: Inputs) -> bytes:
    """A case as the worker receives it, pickled once: the controller sends the same bytes to every
    worker that runs the case (the corpus' model-sized cases are tens of megabytes; pickling them once
    per worker cost the controller ~10 s of CPU in a full run)."""
    return bytes(ForkingPickler.dumps(("run", case, inputs)))


# a started worker process: (process, its answers, its requests, its log, when it started)
Spawned = tuple[subprocess.Popen, Connection, Connection, Any, float]
PLAN_TIMEOUT_S = 60.0  # worker.plan: supports() over the cases, milliseconds each
STARTUP_TIMEOUT_S = 300.0  # importing a framework (and a cold CUDA context) can be slow
PREPARE_TIMEOUT_S, PREPARE_PER_CASE_S, RUNS_PER_RELATION = 60.0, 10.0, 4  # prepare's deadline: fixed + per build


def _death(exitcode: int | None) -> str:
    if exitcode is None:
        return "worker stopped answering"
    if exitcode < 0:
        try:
            return f"worker killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"worker killed by signal {-exitcode}"
    return f"worker exited with status {exitcode}"


class Worker:
    """One backend on one device in its own process, restarted after a crash or timeout."""

    def __init__(self, backend: str, device: str, env: dict[str, str] | None = None) -> None:
        self.backend, self.device = backend, device
        self.env = dict(env or {})  # set in the worker's environment only (e.g. CONVDIFF_THREADS: relation runs)
        self.proc: subprocess.Popen | None = None
        self.conn: Any = None   # worker -> controller
        self.send_conn: Any = None  # controller -> worker
        self.sender: ThreadPoolExecutor | None = None  # writes to send_conn, in order (see _send)
        self.log: Any = None    # the worker's stderr, kept for crash messages
        self.reason: str | None = None  # why this backend/device cannot run here
        self.broken = False  # the reason is a failure (the worker did not start, setup() raised), not a missing device
        self.version = "unknown"
        self.fingerprint: dict[str, str] = {}
        self.host: dict[str, Any] = {}   # what the framework decided from the host (Backend.host_facts)
        self.threads: int | None = None  # Backend.thread_count in the worker, from its hello
        self.threads_reason: str | None = None  # why set_threads could not apply CONVDIFF_THREADS there
        self.kernels_reason: str | None = None  # why use_kernel_variant could not apply CONVDIFF_KERNELS there
        self.started_at = 0.0
        self.inflight: deque[tuple[Case, Inputs]] = deque()
        self.head_since = 0.0  # when the worker became free for the oldest case in flight
        self.spare: Spawned | None = None  # a second process, started after the first crash (see restart)
        self.restarts = 0
        self.memory_retires = 0  # answers after which it retired for its memory budget (harness/execution/memory.py)
        self.relieving = False  # retired by the controller for the machine's memory: restart without a spare
        self.retried_head = False  # the oldest case in flight timed out once and was sent to a fresh worker
        self.retries_saved = 0  # timeouts whose retry on a fresh worker answered (not recorded as timeouts)
        self.batch_size = 0  # Backend.batch_size, from the hello: > 0 where prepare() builds ahead
        self.preparing: float | None = None  # the deadline of a prepare in progress
        self.prepared: dict[str, Any] = {}  # what the last prepare reported (counts, or an error)
        self.planned: list[Case] = []  # the cases of the last plan (alive, so their ids stay theirs)
        self.declined: dict[int, str] = {}  # id(case) -> why the backend declares it unsupported
        self.greeted = False  # the live process's hello was read (ready() is then answered at once)
        # Fresh interpreters only: a forked process died before greeting (from then on), or a CUDA worker on a
        # machine with a GPU. The CUDA runtime does not survive a fork: forked from torch-inductor's template,
        # torch-inductor-cuda's setup failed with "Cannot re-initialize CUDA in forked subprocess" (H200,
        # 2026-11-27), so the target was skipped, though no import of the template initializes CUDA (likely:
        # torch marks the forks of a process that has asked CUDA for its device count, which an import may).
        self.fresh_only = device != "cpu" and gpu_present()

    @property
    def target(self) -> str:
        return f"{self.backend}-{self.device}"

    # --- lifecycle -----------------------------------------------------------
    def launch(self) -> None:
        """Start the process without waiting for it (start several, then `ready()` each).

        A fresh interpreter (`python -m harness.execution.worker`), not multiprocessing: no fork
        of a process holding framework threads, no re-import of the caller's __main__.
        """
        if self.log is not None:
            self.log.close()
        self.proc, self.conn, self.send_conn, self.log, self.started_at = self._spawn()
        self.sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"send-{self.target}")

    def _spawn(self) -> Spawned:
        """A fork of the zygote that has imported this backend's framework (harness/execution/zygote.py),
        or a fresh interpreter where there is none (CONVDIFF_ZYGOTE=0, or forking failed before)."""
        to_w_r, to_w_w = os.pipe()
        from_w_r, from_w_w = os.pipe()
        log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker; closed in stop()
        env = {**child_environment(), **worker_env(), **self.env}
        proc: Any = None
        zygote = None if self.fresh_only else zygote_of(self.backend)
        if zygote is not None:
            proc = zygote.fork(self.backend, self.device, (to_w_r, from_w_w, log.fileno()), env)
        if proc is None:
            proc = subprocess.Popen(
                [sys.executable, "-m", "harness.execution.worker", self.backend, self.device, str(to_w_r), str(from_w_w)],
                pass_fds=(to_w_r, from_w_w), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env=env, cwd=os.getcwd(),
            )
        os.close(to_w_r)
        os.close(from_w_w)
        return proc, Connection(from_w_r, writable=False), Connection(to_w_w, readable=False), log, time.monotonic()

    def _adopt_spare(self) -> bool:
        """Replace the dead process by the spare, already importing (or done importing) its framework."""
        if self.spare is None:
            return False
        if self.log is not None:
            self.log.close()
        self.proc, self.conn, self.send_conn, self.log, self.started_at = self.spare
        self.spare = None
        self.sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"send-{self.target}")
        return True

    def _stop_spare(self) -> None:
        if self.spare is None:
            return
        proc, conn, send_conn, log, _ = self.spare
        self.spare = None
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for c in (conn, send_conn):
            c.close()
        log.close()

    def _last_log_line(self) -> str:
        if self.log is None:
            return ""
        try:
            self.log.seek(0)
            lines = [ln.strip() for ln in self.log.read().decode(errors="replace").splitlines() if ln.strip()]
        except (OSError, ValueError):
            return ""
        return f": {lines[-1][:300]}" if lines else ""

    def _exit_code(self) -> int | None:
        try:
            return self.proc.wait(2) if self.proc else None
        except subprocess.TimeoutExpired:
            return None

    def ready(self) -> bool:
        """Wait for the worker's hello; False (with `reason`) if it cannot run."""
        if self.greeted and self.proc is not None:
            return self.reason is None
        if self.proc is None and not self._adopt_spare():
            self.launch()
        left = STARTUP_TIMEOUT_S - (time.monotonic() - self.started_at)
        try:
            if not wait([self.conn], timeout=max(left, 0.0)):
                raise EOFError
            _, info = self.conn.recv()
        except (EOFError, OSError):
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
            if isinstance(self.proc, Forked) and not self.fresh_only:  # forking this framework failed: start fresh
                self.kill()
                self.fresh_only = True
                self._stop_spare()
                return self.ready()
            self.reason = f"worker did not start ({_death(self._exit_code())}){self._last_log_line()}"
            self.broken = True
            self.kill()
            return False
        self.reason, self.version, self.fingerprint = info["reason"], info["version"], info["fingerprint"]
        self.broken = bool(info.get("broken"))
        self.host = info.get("host", {})
        self.threads, self.threads_reason = info.get("threads"), info.get("threads_reason")
        self.kernels_reason = info.get("kernels_reason")
        self.greeted = True
        self.batch_size = int(info.get("batch_size", 0))
        if self.reason:
            self.kill()
        return self.reason is None

    def _send(self, message: tuple) -> None:
        self._send_wire(bytes(ForkingPickler.dumps(message)))

    def _send_wire(self, wire: bytes) -> None:
        """Write one pickled message from the sender thread, in order. The controller must never block
        on a write: with a large case queued behind one whose large answer the worker is writing, both
        pipes fill and each side waits for the other (model-sized tensors are megabytes)."""
        conn = self.send_conn

        def write() -> None:
            with contextlib.suppress(OSError, ValueError):  # a dead worker shows in collect()
                conn.send_bytes(wire)  # what conn.send(message) writes: the worker's recv() unpickles it

        if self.sender is not None:
            self.sender.submit(write)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
            self._settle_build(None)  # a timeout or a stop: what it was building is not remembered
        if self.sender is not None:
            self.sender.shutdown(wait=True, cancel_futures=True)  # its write fails now the worker is gone
            self.sender = None
        for c in (self.conn, self.send_conn):
            if c is not None:
                c.close()
        self.proc = self.conn = self.send_conn = None
        self.greeted = False

    def retire(self) -> None:
        """End the process now to give its memory back (the controller is short of memory: memory.py); the cases
        it had queued go to a fresh one at the next collect()."""
        if self.proc is None or self.preparing is not None:
            return
        self.kill()
        self._stop_spare()
        self.memory_retires += 1
        self.relieving = True
        self.head_since = time.monotonic()

    def stop(self) -> None:
        """Ask the worker to exit, and kill it if it lingers (framework teardown can take seconds)."""
        stop_all([self])

    def _finish_stop(self, deadline: float) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(max(0.0, deadline - time.monotonic()))
        self.kill()
        self._stop_spare()
        if self.log is not None:
            self.log.close()
            self.log = None

    # --- cases in flight ------------------------------------------------------
    def send_plan(self, cases: list[Case]) -> None:
        """Before any case is submitted: ask which of `cases` the backend declares unsupported
        (worker.plan), so that those get their answer here and none of their inputs is sent."""
        self.planned, self.declined = list(cases), {}
        if self.proc is not None and not self.inflight and self.preparing is None and cases:
            self._send(("plan", self.planned))

    def await_plan(self) -> None:
        """Read send_plan's answer. A worker that dies or hangs meanwhile is replaced at its first
        collect(), and its cases are all sent, as without a plan."""
        if self.proc is None or self.inflight or not self.planned:
            return
        try:
            if wait([self.conn], timeout=PLAN_TIMEOUT_S):
                kind, found = self.conn.recv()
                if kind == "planned":
                    self.declined = {id(self.planned[i]): reason for i, reason in found.items()}
                    return
        except (EOFError, OSError):
            pass
        self.kill()

    def declines(self, case: Case) -> dict[str, Any] | None:
        """The answer for a case the plan found unsupported (what the worker would send), else None."""
        reason = self.declined.get(id(case))
        return None if reason is None else unsupported(reason)

    def prepare(self, cases: list[Case], relations: list[tuple[str, ...]] | None = None) -> None:
        """Before any case is submitted: have the worker build ahead for `cases` and their relations' runs (ahead.py;
        `relations[i]` for cases[i]). The first collect() waits for it; if the worker dies or hangs meanwhile, a fresh
        one runs the cases one by one, as without prepare. A case counts 1 build, a relation about RUNS_PER_RELATION."""
        if not self.batch_size or not cases or self.proc is None or self.inflight:
            return
        self.prepared = {}  # the last prepare's report only (a warm worker kept from an earlier run has one)
        self._send(("prepare", list(cases), list(relations or ())))
        builds = len(cases) + RUNS_PER_RELATION * sum(map(len, relations or ()))
        self.preparing = time.monotonic() + PREPARE_TIMEOUT_S + PREPARE_PER_CASE_S * builds

    def _await_prepared(self) -> None:
        deadline, self.preparing = self.preparing or 0.0, None
        try:
            if wait([self.conn], timeout=max(deadline - time.monotonic(), 0.0)):
                kind, self.prepared = self.conn.recv()
                if kind == "prepared":
                    self.head_since = time.monotonic()
                    return
        except (EOFError, OSError):
            pass
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self.prepared = {"error": f"{_death(self._exit_code())} while preparing{self._last_log_line()}"}
        self.kill()

    def submit(self, case: Case, inputs: Inputs, wire: bytes | None = None) -> None:
        """Queue a case. The worker answers in order, so several may be in flight (pipelining).
        `wire`: run_message(case, inputs), where the caller sends one case to many workers."""
        self.inflight.append((case, inputs))
        if self.proc is not None:  # if the worker died, collect() reports it and resends the rest
            self._send_wire(wire if wire is not None else run_message(case, inputs))
        if len(self.inflight) == 1:
            self.head_since = time.monotonic()

    def _settle_build(self, crash: str | None) -> None:
        """The artefact the gone process was building (backends/artifacts.py): remembered as `crash`, or forgotten."""
        from backends.artifacts import settle_attempt

        if self.proc is not None:
            settle_attempt(self.proc.pid, time.time() - (time.monotonic() - self.started_at), crash)

    def _died(self, elapsed: float) -> dict[str, Any]:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        code = self._exit_code()
        msg = f"{_death(code)} while running this case{self._last_log_line()}"
        self._settle_build(msg)  # died building its model: a later run reports this crash, not building again
        self.kill()
        return {"status": "crash", "message": msg, "duration_s": elapsed}

    def _restart_and_resend(self) -> str | None:
        """A fresh worker gets every case still in flight; returns why it could not start.

        Cheap crashes: from the first restart on, a spare process is kept importing its framework
        beside the live one, so the next crash or timeout costs that case alone, not an import.
        Backends that never crash never pay for a spare."""
        if not self.ready():
            self._stop_spare()
            return self.reason
        if self.relieving:  # no crash: neither counted nor given a spare, which would take the memory back
            self.relieving = False
        else:
            self.restarts += 1
            if self.spare is None:
                self.spare = self._spawn()
        for case, inputs in self.inflight:
            self._send(("run", case, inputs))
        self.head_since = time.monotonic()
        return None

    def collect(self, timeout: float) -> dict[str, Any]:
        """The answer for the oldest case in flight, or a crash/timeout payload for it.

        Its clock starts when the worker became free for it (the previous answer), so
        queued cases are not charged for their predecessors. After a crash or timeout
        the worker is replaced and the remaining cases are sent again.
        """
        if self.preparing is not None:
            self._await_prepared()
        if self.proc is None:
            why = self._restart_and_resend()
            if why:
                self.inflight.popleft()
                return {"status": "crash", "message": f"worker could not be restarted: {why}", "duration_s": 0.0}
        left = timeout - (time.monotonic() - self.head_since)
        ready = wait([self.conn], timeout=max(left, 0.0))
        elapsed = time.monotonic() - self.head_since
        if not ready:
            # Once more on a fresh worker before it counts: a timeout on a loaded machine (35 targets starting on
            # 2 cores) is no finding, and a case that hangs hangs again. The record keeps the load it met.
            load = round(os.getloadavg()[0], 2)
            self.kill()
            retried, self.retried_head = self.retried_head, False
            if not retried and len(self.inflight) and self._restart_and_resend() is None:
                self.retried_head = True  # the same case heads the fresh worker's queue: wait for it again
                return self.collect(timeout)
            self.inflight.popleft()
            tries = "twice, the second time on a fresh worker" if retried else "once; no fresh worker started"
            return {"status": "timeout", "message": f"no result after {timeout:g} s ({tries}); worker killed; "
                    f"1-minute load {load:g} on {os.cpu_count()} cores", "duration_s": elapsed, "load": load}
        self.inflight.popleft()
        if self.retried_head:  # the retry on a fresh worker answered: the timeout is not counted
            self.retries_saved += 1
            self.retried_head = False
        try:
            payload = self.conn.recv()[1]
        except (EOFError, OSError):
            return self._died(elapsed)
        self.head_since = time.monotonic()
        retire = payload.pop("retire", False)
        if retire:  # it ended after this answer (stale_after_refusal or stale_after_run, or its memory budget): a fresh one next
            self.memory_retires += retire == "memory"
            self.kill()
        return payload


STOP_GRACE_S = 0.2  # for all workers together: teardown is the framework's business, not worth waiting on


def stop_all(workers: list[Worker]) -> None:
    """Ask every worker to exit at once, give them STOP_GRACE_S together, then kill the rest."""
    for w in workers:
        if w.proc is not None and w.proc.poll() is None:
            w._send(("stop",))
    # a profiled worker (CONVDIFF_PROFILE) writes its stats on the way out: give it the time
    deadline = time.monotonic() + (STOP_GRACE_S if not os.environ.get("CONVDIFF_PROFILE") else 60.0)
    for w in workers:
        w._finish_stop(deadline)
