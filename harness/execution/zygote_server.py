"""The zygote's own process (harness/execution/zygote.py is the controller's side): import, then fork a
worker per request.

`python -m harness.execution.zygote_server FD CPUS MODULE...`: the controller's child, on the socket FD;
`python -m harness.execution.zygote_server --listen PATH CPUS MODULE...`: the template an xdist session
shares (harness/execution/shared.py). A template may also be forked from another (a ("template", ...)
request): one whose modules begin with all of another's, in order, imports only the rest.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from harness.execution import shared


def _send(sock: socket.socket, msg: Any) -> None:
    data = pickle.dumps(msg)
    sock.sendall(len(data).to_bytes(4, "little") + data)


FDS = {"worker": 3, "script": 1}  # descriptors that come with each kind of request


def descriptors(request: tuple) -> int:
    """How many descriptors come with `request`: a template's socket unless it listens on a path."""
    return (0 if request[3] else 1) if request[0] == "template" else FDS.get(request[0], 0)


def _child(inherited: list[Any], request: tuple, fds: list[int]) -> None:
    """A forked child: a worker (("worker", backend, device, env, cwd) with its request pipe, reply pipe
    and log), a standalone script (("script", path, env, cwd, args, module) with its output file:
    scripts.run_as_main), or a template of its own (("template", cpus, modules, listen_at) with its socket,
    or listening at `listen_at`), which imports what this one has not imported of `modules` and serves."""
    kind, *rest = request
    code = 1
    try:
        for obj in inherited:  # the zygote's sockets (and the owner's pidfd) are not the child's
            with contextlib.suppress(OSError):
                obj.close() if hasattr(obj, "close") else os.close(obj)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if kind == "template":
            cpus, modules, listen_at = rest
            first = None if listen_at else socket.socket(fileno=fds[0])
            serve(first, cpus, modules, listen_at=listen_at)
            code = 0
            return
        if kind == "script":
            path, env, cwd, args, module = rest
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            from harness.execution import scripts

            scripts.inductor_cache(only_if_picked=True)  # a script that compiles forks from inductor's
            code = scripts.run_as_main(path, fds[0], args, module)
            return
        backend, device, env, cwd = rest
        to_worker, from_worker, log = fds
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        from harness.execution import scripts
        from harness.execution.worker import main

        with scripts.deleting_generated_sources():  # what the exit handlers os._exit skips would do
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


def _reap(children: dict[int, socket.socket]) -> None:
    """Collect exited children; each one's status goes to the client that asked for it."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        client = children.pop(pid, None)
        if client is not None:
            with contextlib.suppress(OSError):  # the client may have closed its socket already
                _send(client, ("exited", pid, code))


def serve(first: socket.socket | None, cpus: set[int], modules: list[str], listen_at: str | None = None) -> None:
    """`python -m harness.execution.zygote_server FD CPUS MODULE...`: import, greet, then fork on request.

    CPUS (comma-separated) is the affinity of the thread that asked for the zygote, set before any
    import: a fresh interpreter inherits its launcher's, and frameworks size their pools from it at
    import (XLA's CPU client does), so a worker forked from here sees what a fresh one would.

    `--listen PATH CPUS MODULE...` (harness/execution/shared.py): a zygote shared by the processes of
    one xdist session: it listens on PATH once imported, greets each client that connects, sends each
    worker's exit status to the client that asked for it, kills a client's workers when that client
    disconnects, and leaves when the session's controller exits."""
    from harness.execution.worker import block, die_with_parent

    os.sched_setaffinity(0, cpus)
    owner = None
    if listen_at is None:
        die_with_parent()  # and each child dies with this process (its own die_with_parent)
    else:
        owner = shared.owner_fd(Path(listen_at).parent)
        if owner is None:
            return
    failed = {}
    # multiprocessing.connection: what worker.main imports first, so that no fork has to import it
    block([m[1:] for m in modules if m.startswith("-")])  # Backend.excludes, before anything imports them
    # backends.registry:registered reads the entry points' metadata once here, not once in every fork (~0.1 s)
    for name in ["harness.execution.worker", "backends.registry:registered", "multiprocessing.connection",
                 *(m for m in modules if not m.startswith("-"))]:
        try:
            module, _, call = name.partition(":")  # "module:function": a warm-up its forks would each repeat
            imported = importlib.import_module(module)
            if call:
                getattr(imported, call)()
        except Exception as exc:  # noqa: BLE001 - the worker will meet it again and report it
            failed[name] = f"{type(exc).__name__}: {exc}"[:200]
    listener = shared.listen(Path(listen_at)) if listen_at is not None else None
    clients: dict[socket.socket, tuple[bytes, list[int]]] = {}  # each client's unread bytes and descriptors
    children: dict[int, socket.socket] = {}  # live worker pid -> the client that asked for it
    templates: set[int] = set()  # shared templates forked from here: they outlive the client that asked
    if first is not None:
        clients[first] = (b"", [])
        _send(first, ("ready", failed))
    while True:
        watched: list[Any] = [*clients, *(x for x in (listener, owner) if x is not None)]
        readable, _, _ = select.select(watched, [], [], 0.05)
        _reap(children)
        templates.intersection_update(children)  # a reaped template's pid may be a worker's next
        for ready in readable:
            if ready is owner:  # the session is over: its workers go with this process
                return
            if ready is listener:
                client, _ = listener.accept()
                clients[client] = (b"", [])
                with contextlib.suppress(OSError):
                    _send(client, ("ready", failed))
                continue
            try:
                data, more, _, _ = socket.recv_fds(ready, 1 << 16, 3)
            except OSError:
                data, more = b"", []
            if not data:  # this client is done (or gone)
                del clients[ready]
                ready.close()
                if listener is None:  # reap what has exited, then leave
                    time.sleep(0.05)
                    _reap(children)
                    return
                for pid in [p for p, c in children.items() if c is ready and p not in templates]:  # as if they died with it
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                continue
            buffer, fds = clients[ready]
            buffer, fds = buffer + data, fds + list(more)
            while len(buffer) >= 4 and len(buffer) >= 4 + int.from_bytes(buffer[:4], "little"):
                size = int.from_bytes(buffer[:4], "little")
                request, buffer = pickle.loads(buffer[4:4 + size]), buffer[4 + size:]
                n = descriptors(request)
                mine, fds = fds[:n], fds[n:]
                imports_quiet()
                pid = os.fork()
                if pid == 0:
                    _child([*clients, *(x for x in (listener, owner) if x is not None)], request, mine)
                for fd in mine:
                    os.close(fd)
                children[pid] = ready
                if request[0] == "template" and request[3]:  # it leaves when the session's controller does
                    templates.add(pid)
                with contextlib.suppress(OSError):
                    _send(ready, ("spawned", pid))
            clients[ready] = (buffer, fds)


if __name__ == "__main__":
    if sys.argv[1] == "--listen":
        serve(None, {int(c) for c in sys.argv[3].split(",")}, sys.argv[4:], listen_at=sys.argv[2])
        os._exit(0)  # a framework's teardown may wait on its threads; the workers go with this process
    else:
        serve(socket.socket(fileno=int(sys.argv[1])), {int(c) for c in sys.argv[2].split(",")}, sys.argv[3:])
        os._exit(0)  # the controller waits for this exit: a framework's teardown (torch: ~0.1 s) is no one's business
