"""The worker process: one backend on one device, warm across cases.

It imports its framework once, then answers ("run", case, inputs) messages until
told to stop. It never compares anything: it only reports what the framework did.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

from backends.base import Output, Unsupported, first_line
from backends.registry import get_backend
from harness.execution.failures import error_payload, failure
from harness.execution.grad_exec import execute_gradients
from harness.execution.memory import over_budget, worker_start_mb
from harness.model.case import Case
from harness.numerics.inputs import Inputs

BATCH_ENV = "CONVDIFF_BATCH"  # 0 or off: no Backend.prepare, every case builds alone (bench, tests); cases: the
# cases only, their relation runs built one by one (harness/execution/ahead.py; bench/nightly_ab.py's baseline)
THREADS_ENV = "CONVDIFF_THREADS"  # n: Backend.set_threads(n) before setup (a worker of the `threads` relation)
KERNELS_ENV = "CONVDIFF_KERNELS"  # a name: Backend.use_kernel_variant(name) before setup (the `layout` relation)
PROFILE_ENV = "CONVDIFF_PROFILE"  # a directory: each worker writes its cProfile stats there when it stops


def unsupported_reason(backend: Any, case: Case, device: str) -> str | None:
    """Why the backend declares the case beyond what it can express, from the case alone (no inputs)."""
    return backend.epilogue_reason(case) or backend.input_reason(case) or backend.supports(case, device) or None


def unsupported(reason: str) -> dict[str, Any]:
    """The answer for a case the backend declares unsupported before running anything."""
    return {"status": "unsupported", "message": reason, "duration_s": 0.0}


def plan(backend: Any, cases: list[Case], device: str) -> dict[int, str]:
    """{index: reason} of the cases to come that the backend declares unsupported, so that the controller
    answers them itself and sends none of their inputs (a quarter of a full run's cases: the quantized
    backends decline every float case, the float ones every quantized case). A gradient case is left out
    (its gradients are classified in execute_gradients), as is any case whose check raises: each of those
    is sent and classified by execute() as before."""
    out = {}
    for i, case in enumerate(cases):
        if case.gradient_outputs:
            continue
        try:
            reason = unsupported_reason(backend, case, device)
        except Exception:  # noqa: BLE001 - execute() meets it again and reports it
            continue
        if reason:
            out[i] = reason
    return out


def execute(backend: Any, case: Case, inputs: Inputs, device: str) -> dict[str, Any]:
    """Run one case; classify what happened without judging the values (harness/execution/failures.py:
    a refusal, a resource blow-up, and whose code raised anything else)."""
    start = time.perf_counter()
    try:
        reason = unsupported_reason(backend, case, device)
        if reason:
            return unsupported(reason)
        if case.geometry is None and case.epilogue:
            # an invalid case is judged on whether the framework rejects its convolution: it has no output
            # to apply an epilogue to, and the harness draws no constants for one (numerics/inputs.py)
            case = dataclasses.replace(case, epilogue=())
        out = backend.run(case, inputs, device)
    except Exception as exc:  # noqa: BLE001 - an adapter bug, or a framework's refusal, must not kill the worker
        return failure(exc, backend, case, inputs, time.perf_counter() - start)
    if not isinstance(out, Output):
        return error_payload("adapter", f"{type(backend).__qualname__}.run", f"run() returned {type(out).__name__}, "
                             "not an Output", time.perf_counter() - start)
    return {
        "status": "ok", "array": out.array, "dtype": out.dtype, "tf32": out.tf32, "quant_rounding": out.quant_rounding,
        "path": out.path,
        "translation": "\n".join([*(f"# exact identity: {n}" for n in out.notes), out.translation]),
        "duration_s": time.perf_counter() - start,
    }


def prepare(backend: Any, cases: list[Case], device: str, relations: list[tuple[str, ...]]) -> dict[str, Any]:
    """Backend.prepare for the cases this worker will run and, where the adapter takes their `inputs`, the runs of
    the relations judged on them (harness/execution/ahead.py); an adapter exception is reported, not raised."""
    start = time.perf_counter()
    try:
        if (any(relations) and "inputs" in inspect.signature(backend.prepare).parameters
                and os.environ.get(BATCH_ENV, "").lower() != "cases"):
            from harness.execution.ahead import ahead  # the oracle and relations: only where a build takes them

            cases, inputs = ahead(cases, relations)
            counts = {str(k): int(v) for k, v in backend.prepare(cases, device, inputs=inputs).items()}
        else:
            counts = {str(k): int(v) for k, v in backend.prepare(cases, device).items()}
    except Exception as exc:  # noqa: BLE001 - the cases then build one by one, as without prepare
        counts = {"error": first_line(exc)}
    return {**counts, "seconds": round(time.perf_counter() - start, 3)}


def block(modules: Iterable[str]) -> None:
    """Make `import m` raise ImportError in this process for each of `modules` not imported yet
    (Backend.excludes): a None entry in sys.modules is Python's own "import halted" marker."""
    for m in modules:
        sys.modules.setdefault(m, None)  # type: ignore[arg-type]


def thread_count(backend: Any) -> int | None:
    """Backend.thread_count as a plain int (None when the adapter does not say, or raises)."""
    try:
        n = backend.thread_count()
    except Exception:  # noqa: BLE001 - an adapter bug here costs the relation's message, not the worker
        return None
    return None if n is None else int(n)


def plain_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """Host facts as built-in types only, so the controller can unpickle them without any framework."""
    def plain(v: Any) -> Any:
        for t in (bool, int, float):  # bool first: it is an int too
            if isinstance(v, t):
                return t(v)
        return [str(x) for x in v] if isinstance(v, list | tuple) else str(v)

    return {str(k): plain(v) for k, v in facts.items()}


def _drain(requests: Any, inbox: queue.Queue) -> None:
    """Read requests as they arrive. Otherwise, with cases pipelined, the controller can block
    writing a large request (inputs) while this process blocks writing a large reply (outputs,
    gradients) that the controller has not come to read yet: both pipes full, a deadlock."""
    while True:
        try:
            msg = requests.recv()
        except (EOFError, OSError):
            msg = ("stop",)
        inbox.put(msg)
        if msg[0] == "stop":
            return


def start_backend(backend_name: str, device: str) -> tuple[Any, dict[str, Any]]:
    """Import the framework and read what it decided (the worker's one-time cost: `import` in the
    profile `bench/where_time_goes.py` reads); (backend, the hello message's info)."""
    backend = None
    try:
        backend = get_backend(backend_name)
        missing = backend.unavailable_reason()  # not installed: a skip with the install hint, not a broken target
        if missing is not None:
            return backend, {"reason": missing, "version": "unknown", "fingerprint": {}, "host": {}}
        block(backend.excludes)  # a fresh worker (a forked one inherits its zygote's blocks)
        threads_reason = None
        if os.environ.get(THREADS_ENV):
            try:
                backend.set_threads(int(os.environ[THREADS_ENV]))
            except Unsupported as exc:
                threads_reason = str(exc)
        kernels_reason = None
        if os.environ.get(KERNELS_ENV):
            try:
                backend.use_kernel_variant(os.environ[KERNELS_ENV])
            except Unsupported as exc:
                kernels_reason = str(exc)
        backend.setup(device)
        reason = backend.device_reason(device)
        # Plain str only: a framework's str subclass (torch's TorchVersion) would make the
        # controller import the framework when it unpickles this message.
        fp = backend.fingerprint(device) if reason is None else {}
        info = {"reason": reason, "version": str(backend.version()),
                "fingerprint": {str(k): str(v) for k, v in fp.items()},
                "host": plain_facts(backend.host_facts(device)) if reason is None else {},
                "batch_size": 0 if os.environ.get(BATCH_ENV, "").lower() in ("0", "off") else int(backend.batch_size),
                "threads": thread_count(backend) if reason is None else None, "threads_reason": threads_reason,
                "kernels_reason": kernels_reason}
    except Exception as exc:  # noqa: BLE001 - report, do not die silently
        info = {"reason": f"setup failed: {first_line(exc)}", "version": "unknown", "fingerprint": {}, "host": {},
                "broken": True}
    return backend, info


def worker_main(requests: Any, replies: Any, backend_name: str, device: str) -> None:
    """Entry point of the worker process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller handles Ctrl-C
    backend, info = start_backend(backend_name, device)
    replies.send(("ready", info))
    if info["reason"]:
        return
    inbox: queue.Queue = queue.Queue()
    threading.Thread(target=_drain, args=(requests, inbox), daemon=True).start()
    start_mb = worker_start_mb()  # once set up: the memory budget counts growth beyond it (memory.py)
    while True:
        msg = inbox.get()
        if msg[0] == "stop":
            return
        if msg[0] == "plan":  # which of the cases to come need no inputs: answered at once
            replies.send(("planned", plan(backend, msg[1], device)))
            continue
        if msg[0] == "prepare":  # build ahead for the cases to come (Backend.prepare); never fatal
            replies.send(("prepared", prepare(backend, msg[1], device, msg[2] if len(msg) > 2 else [])))
            continue
        _, case, inputs = msg
        result = execute(backend, case, inputs, device)
        if case.gradient_outputs:  # the backward pass: each gradient classified on its own
            result["grads"] = execute_gradients(backend, case, inputs, device, result)
        retire = (result["status"] == "rejected" and backend.stale_after_refusal(case)) or backend.stale_after_run(case)
        if retire:  # the pool replaces this process: the cases queued behind go to the fresh one
            result["retire"] = True
        elif over_budget(start_mb):  # grown beyond its share of the machine's memory (harness/execution/memory.py)
            retire, result["retire"] = True, "memory"
        replies.send(("result", result))
        if retire:
            return


def die_with_parent() -> None:
    """Linux: have the kernel kill this worker when the controller dies, even mid-call (a hung
    framework never reads the closed pipe). Elsewhere the closed pipe is the only signal."""
    import ctypes
    import os

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the controller died before prctl took effect
        os._exit(1)


def main(argv: list[str]) -> None:
    """`python -m harness.execution.worker BACKEND DEVICE READ_FD WRITE_FD` (started by pool.Worker)."""
    from multiprocessing.connection import Connection

    backend, device, read_fd, write_fd = argv
    die_with_parent()
    requests = Connection(int(read_fd), writable=False)
    replies = Connection(int(write_fd), readable=False)
    profile_dir = os.environ.get(PROFILE_ENV)
    if not profile_dir:
        worker_main(requests, replies, backend, device)
        return
    import cProfile

    prof = cProfile.Profile()  # bench/where_time_goes.py: this worker's whole life, written when it stops
    try:
        prof.runcall(worker_main, requests, replies, backend, device)
    finally:
        prof.dump_stats(os.path.join(profile_dir, f"worker-{backend.replace(':', '_')}-{device}-{os.getpid()}.prof"))


if __name__ == "__main__":
    main(sys.argv[1:])
