"""Run a standalone script as `__main__` in a forked process, as `python script.py` would run it.

Used where a process that has already imported a script's frameworks forks one child per script: a
zygote (harness/execution/zygote_server.py, a script request) and the tests' script servers
(tests/script_fork.py). The child chdirs beside the script, puts its directory first on sys.path, sends
stdout and stderr to one file and runs the script; its exit status is the script's: SystemExit's code, 1
for an uncaught exception (its traceback printed), -N for a signal (the parent's waitpid). A module run
(`module=True`: `convdiff extract`'s framework probes) is `python -m module args...` instead: it stays in
the working directory, which goes first on sys.path. Either way $PYTHONPATH's entries come next, as the
interpreter puts them at its start (the forking process started under its own environment).

A forked child ends with os._exit, which skips the interpreter's exit handlers: the one that matters is
TensorFlow autograph's, which deletes the temporary file it writes each converted function's source to
(`/tmp/__autograph_generated_file*.py`; Keras converts its own grouped and 3-D conv helper in every
case that takes it). `remove_generated_sources` does that handler's work for the files a child wrote.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import traceback
from collections.abc import Iterator, Sequence


def run_as_main(path: str, out_fd: int, args: Sequence[str] = (), module: bool = False) -> int:
    """Run `path` (a module's name where `module`) as __main__ with `args` after it and stdout and stderr
    on `out_fd` (closed here); the exit code."""
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    if out_fd not in (1, 2):
        os.close(out_fd)
    if not module:
        os.chdir(os.path.dirname(path) or ".")
    first = os.getcwd() if module else os.path.dirname(os.path.abspath(path))  # what `python` puts first
    entries = [first, *(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    sys.path[:0] = [e for e in dict.fromkeys(entries) if e == first or e not in sys.path]
    sys.argv = [path, *args]
    code = 0
    with deleting_generated_sources():
        try:
            if module:
                runpy.run_module(path, run_name="__main__", alter_sys=True)  # argv[0]: the module's file, as -m sets
            else:
                runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            if isinstance(exc.code, int) or exc.code is None:
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - what `python script.py` does with it
            traceback.print_exc()
            code = 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
    return code


AUTOGRAPH_PREFIX = "__autograph_generated_file"  # tensorflow/python/autograph/pyct/loader.py's temp files


def generated_sources() -> frozenset[str]:
    """The autograph-generated modules this process holds (each has a temp file of its source)."""
    return frozenset(name for name in list(sys.modules) if name.startswith(AUTOGRAPH_PREFIX))


@contextlib.contextmanager
def deleting_generated_sources() -> Iterator[None]:
    """Around a forked child's work: on the way out, delete the sources of the autograph modules it loaded."""
    held = generated_sources()  # the forking process's own, if it ever converted a function
    try:
        yield
    finally:
        remove_generated_sources(held)


def remove_generated_sources(inherited: frozenset[str]) -> None:
    """Delete the source files of the autograph modules loaded since `inherited` was taken, as autograph's
    exit handler would: a forked child's os._exit skips it, and each file would stay in /tmp."""
    for name in generated_sources() - inherited:
        path = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(path, str) and os.path.basename(path).startswith(AUTOGRAPH_PREFIX):
            with contextlib.suppress(OSError):
                os.remove(path)


def inductor_cache(only_if_picked: bool = False) -> None:
    """Scripts that torch.compile keep inductor's caches where the torch-inductor worker keeps them
    (`$CONVDIFF_CACHE/inductor/<ISA setting>`), not in inductor's default /tmp/torchinductor_<user>: so
    `rm -rf .convdiff-cache` leaves the scripts cold too, a compile the worker already did for the same
    graph is not repeated, and a cache written under one vector ISA is never read under another (inductor's
    FX graph cache key leaves the ISA out: backends/torch/inductor.py cache_dir). Only where torch is
    imported already; an explicit TORCHINDUCTOR_CACHE_DIR is kept; CONVDIFF_CACHE=off leaves inductor's
    default. `only_if_picked` (a fork's own child): only where inductor's vector ISA is picked already (a
    template that preloads inductor), since picking it costs ~3 s of CPU, which a script that never
    compiles should not pay in every fork."""
    if "torch" not in sys.modules or os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return
    if only_if_picked and "torch._inductor.cpu_vec_isa" not in sys.modules:
        return
    with contextlib.suppress(Exception):  # torch without inductor: the script reports what it meets
        import torch

        from backends.torch.inductor import cache_dir, isa_setting

        root = cache_dir(isa_setting(torch))
        if root is not None:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root)
