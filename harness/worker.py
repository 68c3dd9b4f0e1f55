"""The worker process: one backend on one device, warm across cases.

It imports its framework once, then answers ("run", case, inputs) messages until
told to stop. It never compares anything: it only reports what the framework did.
"""

from __future__ import annotations

import signal
import time
import traceback
from typing import Any

from backends.base import Rejected, Unsupported, first_line
from backends.registry import get_backend

from .case import Case
from .inputs import Inputs


def execute(backend: Any, case: Case, inputs: Inputs, device: str) -> dict[str, Any]:
    """Run one case; classify what happened without judging the values."""
    start = time.perf_counter()
    reason = backend.supports(case, device)
    if reason:
        return {"status": "unsupported", "message": reason, "duration_s": 0.0}
    try:
        out = backend.run(case, inputs, device)
    except Unsupported as exc:
        return {"status": "unsupported", "message": str(exc), "duration_s": time.perf_counter() - start}
    except Rejected as exc:
        return {"status": "rejected", "message": str(exc), "duration_s": time.perf_counter() - start}
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not kill the worker
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f" (at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})"
        return {"status": "error", "message": first_line(exc) + where, "duration_s": time.perf_counter() - start}
    return {
        "status": "ok", "array": out.array, "dtype": out.dtype, "tf32": out.tf32,
        "translation": "\n".join([*(f"# exact identity: {n}" for n in out.notes), out.translation]),
        "duration_s": time.perf_counter() - start,
    }


def worker_main(requests: Any, replies: Any, backend_name: str, device: str) -> None:
    """Entry point of the worker process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller handles Ctrl-C
    try:
        backend = get_backend(backend_name)
        backend.setup(device)
        reason = backend.device_reason(device)
        # Plain str only: a framework's str subclass (torch's TorchVersion) would make the
        # controller import the framework when it unpickles this message.
        fp = backend.fingerprint(device) if reason is None else {}
        info = {"reason": reason, "version": str(backend.version()),
                "fingerprint": {str(k): str(v) for k, v in fp.items()}}
    except Exception as exc:  # noqa: BLE001 - report, do not die silently
        info = {"reason": f"setup failed: {first_line(exc)}", "version": "unknown", "fingerprint": {}}
    replies.send(("ready", info))
    if info["reason"]:
        return
    while True:
        try:
            msg = requests.recv()
        except EOFError:
            return
        if msg[0] == "stop":
            return
        _, case, inputs = msg
        replies.send(("result", execute(backend, case, inputs, device)))


def main(argv: list[str]) -> None:
    """`python -m harness.worker BACKEND DEVICE READ_FD WRITE_FD` (started by pool.Worker)."""
    from multiprocessing.connection import Connection

    backend, device, read_fd, write_fd = argv
    requests = Connection(int(read_fd), writable=False)
    replies = Connection(int(write_fd), readable=False)
    worker_main(requests, replies, backend, device)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
