"""The warm pool: idle workers kept for the next run in this process (the pytest plugin turns it on)."""

from __future__ import annotations

import os

from harness.execution.pool import Worker, stop_all
from harness.execution.zygote import environment_key


class WarmPool:
    """Idle workers kept warm for the next run in this process, so that it does not import their
    frameworks again: the pytest plugin turns it on (dozens of test modules and the case items run the
    same backends, each run would otherwise start its own); `convdiff run` and the other commands stop
    their workers at the end, as before.

    Only a healthy idle worker is kept: its first process (no crash, no spare), nothing in flight, not a
    `fault:*` double. It is handed back only to a run of the same backend and device under the same
    environment and working directory (a test that sets ONEDNN_MAX_CPU_ISA or CONVDIFF_CACHE gets a fresh
    one). The idle workers' resident memory is capped (`CONVDIFF_WARM_POOL_MB`, default 6144), the least
    recently used stopped first. Reuse is a longer run of the same warm worker, which `convdiff run`
    does for every case anyway: a verdict cannot depend on it."""

    def __init__(self) -> None:
        self.enabled = False
        self.idle: list[tuple[tuple, Worker]] = []  # least recently used first

    @staticmethod
    def key(backend: str, device: str) -> tuple:
        return backend, device, os.getcwd(), environment_key()

    def take(self, backend: str, device: str) -> Worker | None:
        key = self.key(backend, device)
        for i, (k, w) in enumerate(self.idle):
            if k == key:
                del self.idle[i]
                if w.proc is not None and w.proc.poll() is None:
                    return w
                w.kill()
                return None
        return None

    def give(self, worker: Worker) -> bool:
        """Keep the worker (True) or leave it to the caller to stop (False)."""
        healthy = (worker.proc is not None and worker.proc.poll() is None and worker.greeted and worker.reason is None
                   and not worker.inflight and worker.preparing is None and worker.restarts == 0
                   and worker.spare is None)
        # a worker with settings of its own (a relation's thread count) is never handed to a plain run
        if not (self.enabled and healthy) or worker.backend.startswith("fault:") or worker.env:
            return False
        self.idle.append((self.key(worker.backend, worker.device), worker))
        budget = float(os.environ.get("CONVDIFF_WARM_POOL_MB", "6144")) * 2**20
        while self.idle and sum(_rss(w) for _, w in self.idle) > budget:
            stop_all([self.idle.pop(0)[1]])
        return True

    def close(self) -> None:
        idle, self.idle = self.idle, []
        stop_all([w for _, w in idle])


def _rss(worker: Worker) -> int:
    """Resident bytes of the worker's process (0 when unknown)."""
    try:
        with open(f"/proc/{worker.proc.pid}/statm") as f:  # type: ignore[union-attr]
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, AttributeError, ValueError, IndexError):
        return 0


POOL = WarmPool()


def release(workers: list[Worker]) -> None:
    """The end of a run: each worker back to the warm pool where it may go, the others stopped."""
    stop_all([w for w in workers if not POOL.give(w)])
