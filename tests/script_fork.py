"""Run standalone reproducer scripts, each in its own process, forked from one that imported their frameworks.

Used by tests/helpers.py `run_scripts` for scripts whose heavy imports match no backend's zygote template
(`SCRIPT_TEMPLATES`; the others fork from that template): `python tests/script_fork.py JOBS.json`, where
JOBS.json lists {"path", "out"} entries. This process imports the heavy modules the scripts import (of
convdiff only where inductor's caches go: harness/execution/scripts.py `inductor_cache`), then forks one
child per script (at most two at a time), which runs it as `python script.py` would
(harness/execution/scripts.py `run_as_main`). Each script still runs alone in a process of its own; only
the framework import, which every script of a group repeats, is paid once. One JSON line per script on stdout: {"i", "rc"}.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from harness.execution import scripts

HEAVY = ("torch", "torchao", "tensorflow", "tf2onnx", "keras", "paddle", "paddle2onnx", "tvm", "jax",
         "onnx", "onnxruntime", "openvino", "ai_edge_litert", "flatbuffers", "executorch")
TIMEOUT_S = 300.0


def heavy_imports(source: str) -> list[str]:
    """The heavy top-level packages a script imports, anywhere in it, in order of first appearance."""
    found = re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", source, re.M)
    return [m for m in dict.fromkeys(found) if m in HEAVY]


def _child(path: str, out: str) -> None:
    for inherited in _INHERITED:
        with contextlib.suppress(OSError):
            os.close(inherited)
    os._exit(scripts.run_as_main(path, os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)))


def import_heavy(modules: list[str]) -> None:
    for module in modules:
        with contextlib.suppress(Exception):  # the script meets the same failure and reports it
            importlib.import_module(module)
    scripts.inductor_cache()  # where torch is imported: scripts.inductor_cache
    sys.stdout.flush()


def _print(text: str) -> None:
    print(text, flush=True)


def run_jobs(jobs: list[dict], parallel: int = 2, emit: Callable[[str], None] = _print) -> None:
    """Fork one child per job, `parallel` at a time; one {"i", "rc"} line per finished job (`emit`)."""
    running: dict[int, tuple[int, float]] = {}  # pid -> (job index, start)
    queue = list(range(len(jobs)))
    while queue or running:
        while queue and len(running) < parallel:
            i = queue.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(jobs[i]["path"], jobs[i]["out"])
            running[pid] = (i, time.monotonic())
        for pid, (i, start) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done and time.monotonic() - start > TIMEOUT_S:
                os.kill(pid, signal.SIGKILL)
                done, status = os.waitpid(pid, 0)
            if done:
                del running[pid]
                rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                emit(json.dumps({"i": i, "rc": rc}))
        time.sleep(0.02)


def main(jobs_file: str) -> None:
    with open(jobs_file) as f:
        jobs = json.load(f)
    import_heavy(list(dict.fromkeys(m for job in jobs for m in heavy_imports(Path(job["path"]).read_text()))))
    run_jobs(jobs)


def serve(modules: list[str]) -> None:
    """`--serve MOD...`: import the modules once, then for each jobs file named on stdin run its jobs and
    print {"done": n}; ends at end of input. Kept by tests/helpers.py for the whole pytest process, so a
    group of frameworks is imported once per process, not once per test module (each script is still a
    fork of an interpreter that imported only its heavy modules)."""
    import_heavy(modules)
    for n, line in enumerate(sys.stdin):
        with open(line.strip()) as f:
            run_jobs(json.load(f))
        print(json.dumps({"done": n}), flush=True)


_INHERITED: list[int] = []  # the server's descriptors, closed in each script's process


def _write(stream, text: str) -> None:
    with contextlib.suppress(OSError):  # a client that went away: its scripts still finish and are reaped
        stream.write(text + "\n")
        stream.flush()


IDLE_S = 300.0  # a shared server with no request for this long leaves (its frameworks' memory with it)


def listen(sock_path: str, modules: list[str]) -> None:
    """`--listen PATH MOD...`: the same, shared by the processes of one xdist session
    (harness/execution/shared.py): once imported, it listens on PATH; each client connects, sends one
    jobs file's path and reads the lines `serve` prints, one client at a time. It leaves when the
    session's controller exits, or after IDLE_S without a request (a later request starts it again)."""
    import select

    from harness.execution import shared

    path = Path(sock_path)
    owner = shared.owner_fd(path.parent)
    if owner is None:
        return
    import_heavy(modules)
    listener = shared.listen(path)
    last = time.monotonic()
    while True:
        readable, _, _ = select.select([listener, owner], [], [], 1.0)
        if owner in readable:
            return
        if not readable:
            if time.monotonic() - last < IDLE_S:
                continue
            with shared.claimed(path.parent, path.stem):  # no client is connecting meanwhile
                if not select.select([listener], [], [], 0)[0]:
                    path.unlink(missing_ok=True)
                    return
        client, _ = listener.accept()
        with client, client.makefile("rw", buffering=1) as stream:
            request = stream.readline().strip()
            with contextlib.suppress(OSError, ValueError):
                with open(request) as f:
                    jobs = json.load(f)
                _INHERITED[:] = [listener.fileno(), owner, client.fileno()]
                run_jobs(jobs, emit=lambda text: _write(stream, text))
                _write(stream, json.dumps({"done": 0}))
        last = time.monotonic()


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2:])
    elif sys.argv[1] == "--listen":
        listen(sys.argv[2], sys.argv[3:])
        os._exit(0)  # a framework's teardown may wait on its threads
    else:
        main(sys.argv[1])
