"""Running a report's scripts, and what a script says about itself without running it.

A snippet runs as a maintainer would run it: in an empty temporary directory, in a fresh interpreter, with a
clean environment (PATH and HOME only: the snippet sets what else it needs). A full check runs beside its
file with this process's environment. Either runs in a process group of its own, killed on a timeout.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from reports.upstream.model import ScriptRun

_STDLIB = frozenset(sys.stdlib_module_names)
_SET = re.compile(r"""os\.environ(?:\[\s*["'](\w+)["']\s*\]\s*=|\.setdefault\(\s*["'](\w+)["']\s*,)\s*["']([^"']*)["']""")
QUIET = ("TF_CPP_MIN_LOG_LEVEL",)  # settings a snippet makes only to quiet its output


def clean_env(python: str = sys.executable) -> dict[str, str]:
    """PATH (with the interpreter's directory first, so its console scripts are found) and HOME."""
    path = os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "/usr/bin:/bin")])
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp")}


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> ScriptRun:
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return ScriptRun(exit=proc.returncode, output=out.decode(errors="replace"), seconds=time.monotonic() - start,
                     timed_out=timed_out)


def run_snippet(source: str, timeout: float, python: str = sys.executable) -> ScriptRun:
    """The snippet as `python repro.py` in an empty directory with a clean environment."""
    with tempfile.TemporaryDirectory(prefix="upstream-snippet-") as tmp:
        path = Path(tmp) / "repro.py"
        path.write_text(source, encoding="utf-8")
        return _run([python, str(path)], Path(tmp), clean_env(python), timeout)


def run_check(path: Path, timeout: float) -> ScriptRun:
    """A full check (or an older script) beside its file, with this process's environment."""
    return _run([sys.executable, str(path.resolve())], path.parent, dict(os.environ), timeout)


def settings_of(source: str) -> dict[str, str]:
    """The environment variables a snippet sets for itself (`os.environ["K"] = "V"`, or setdefault), those
    that only quiet its output left out."""
    found = {m.group(1) or m.group(2): m.group(3) for m in _SET.finditer(source)}
    return {k: v for k, v in found.items() if k not in QUIET}


@contextlib.contextmanager
def environ(settings: dict[str, str]) -> Iterator[None]:
    """This process's environment with `settings` added while the block runs (workers started in it, and the
    templates they fork from, are keyed by the environment: harness/execution/zygote.py)."""
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def imported(source: str) -> list[str]:
    """The top-level packages a script imports anywhere in its code, in order; [] where it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def missing_imports(source: str) -> list[str]:
    """Third-party packages the script imports that are not installed here."""
    return [m for m in imported(source) if m not in _STDLIB and importlib.util.find_spec(m) is None]


def distributions(source: str) -> list[str]:
    """The installed distributions of the third-party packages a script imports (tensorflow -> tensorflow-cpu)."""
    found: list[str] = []
    for module in imported(source):
        if module not in _STDLIB:
            found += [d for d in _distributions(module) if d not in found]
    return found


@functools.cache
def _distributions(module: str) -> tuple[str, ...]:
    try:
        importlib.metadata.distribution(module)
        return (module,)
    except importlib.metadata.PackageNotFoundError:
        names = importlib.metadata.packages_distributions().get(module, [])
        return tuple(dict.fromkeys(_display(d) for d in names))


def _display(dist: str) -> str:
    try:
        return importlib.metadata.distribution(dist).metadata["Name"] or dist
    except importlib.metadata.PackageNotFoundError:
        return dist


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return ""
