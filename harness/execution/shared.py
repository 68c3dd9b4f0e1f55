"""Template processes shared by the processes of one pytest-xdist session.

Under `make test` two xdist processes run the tests side by side, and each started its own zygotes
(harness/execution/zygote.py) and reproducer-script servers (tests/script_fork.py): a framework import
that both processes needed was paid twice, and which one paid it depended on which process drew which
test (measured on a cold run, 2 cores: 67 of 241 CPU-s of such imports were second copies). The xdist
controller makes a directory (`CONVDIFF_SHARED_DIR`, which each xdist process `adopt`s); a template
process is then started once per session under a name that digests everything it is keyed by, listens
on a Unix socket there, and serves every process of the session that asks for the same key. It stays
until the controller exits (it watches its pid) and its own children die with it, as before.

A process a test starts (a `convdiff run`, a nested pytest) inherits the variable: it connects to a
zygote the session already runs for its key (`inherited`; 11 such processes in a cold make test paid
12.8 CPU-s of framework imports for private ones), and starts a private one, as before, where none
runs (one started for it would stay until the session ends, holding a framework's memory). Outside a
session nothing is shared. An xdist session a test starts (tests/test_plugin.py) keeps the outer one's
directory instead of making its own: its processes adopt it like the outer session's, so they fork from
the templates running there (before, each such session imported torch once more, ~4 CPU-s). What a
template forks is unchanged: the key holds the modules it imports, the environment and CPU affinity it
imports under, and the interpreter.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

SHARED_ENV = "CONVDIFF_SHARED_DIR"
OWNER_FILE = "owner"


_ADOPTED: list[Path] = []  # an xdist process's session directory


def adopt() -> None:
    """An xdist process: use the session's directory, starting the templates it needs there."""
    found = inherited()
    if found is not None:
        _ADOPTED[:] = [found]


def directory() -> Path | None:
    """This xdist process's session directory, or None outside an xdist process."""
    return _ADOPTED[0] if _ADOPTED and _ADOPTED[0].is_dir() else None


def inherited() -> Path | None:
    """The session directory named in the environment: a process a test starts (a `convdiff run`, a nested
    pytest) connects to a template the session already runs for its key, and starts none there (it would
    stay until the session ends); None outside a session."""
    value = os.environ.get(SHARED_ENV, "")
    return Path(value) if value and Path(value, OWNER_FILE).is_file() else None


def start_session() -> Path:
    """The xdist controller: a fresh directory, named to the processes it starts through the environment."""
    short = "/tmp" if os.path.isdir("/tmp") else None  # a socket's path must fit in 107 bytes
    path = Path(tempfile.mkdtemp(prefix="convdiff-shared-", dir=short))
    (path / OWNER_FILE).write_text(str(os.getpid()))
    os.environ[SHARED_ENV] = str(path)
    return path


def end_session(path: Path) -> None:
    """The controller is done: no new client can find a template (the templates leave when it exits)."""
    if os.environ.get(SHARED_ENV) == str(path):
        del os.environ[SHARED_ENV]
    shutil.rmtree(path, ignore_errors=True)


def owner_fd(path: Path) -> int | None:
    """A descriptor that becomes readable when the session's controller exits (None: it is gone already)."""
    try:
        return os.pidfd_open(int((path / OWNER_FILE).read_text()))
    except (OSError, ValueError):
        return None


def name(kind: str, *parts: object) -> str:
    """A stable name for a template of `kind` keyed by `parts` (the same in every process)."""
    return f"{kind}-{hashlib.sha256(repr(parts).encode()).hexdigest()[:20]}"


@contextlib.contextmanager
def claimed(path: Path, key: str) -> Iterator[None]:
    """Hold the session-wide lock of one template name (starting it, connecting to it, retiring it)."""
    with open(path / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def connect(sock_path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(sock_path))
    except OSError:
        sock.close()
        return None
    return sock


def listen(sock_path: Path) -> socket.socket:
    """The template's listening socket, bound under a temporary name and renamed into place, so that a
    client that finds the name finds a template that has finished its imports."""
    tmp = sock_path.with_name(f"{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(tmp))
    sock.listen(64)
    os.rename(tmp, sock_path)
    return sock


def connect_or_start(path: Path, key: str, start: Callable[[Path], object], alive: Callable[[object], bool],
                     timeout: float) -> socket.socket | None:
    """Connect to the template `key` of this session, starting it first (`start(socket path)`, which
    returns a handle that `alive` checks) when none is listening. None: it could not be started."""
    sock_path = path / f"{key}.sock"
    with claimed(path, key):
        sock = connect(sock_path)
        if sock is not None:
            return sock
        with contextlib.suppress(FileNotFoundError):  # a template that died: its name is free again
            sock_path.unlink()
        handle = start(sock_path)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and alive(handle):
            if sock_path.exists():
                return connect(sock_path)
            time.sleep(0.02)
        return None
