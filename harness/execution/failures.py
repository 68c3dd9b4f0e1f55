"""What an exception out of an adapter's run() becomes: the worker's payload for a case that gave no output.

- `Unsupported`: the adapter cannot express the case (`unsupported`).
- `Rejected`: the framework raised on the case (`rejected`), unless the exception it wraps ran out of
  memory: see below.
- Out of memory (`MemoryError`, numpy's "Unable to allocate 51.9 GiB ...", or an `OutOfMemoryError` class
  such as torch's), raised or wrapped in `Rejected`: a resource blow-up is not a refusal. It is a `crash`,
  whose message says what was asked for and how small the case's own arrays are (a few KiB for most cases:
  asking for gigabytes is itself the symptom).
- Anything else: `error`, with `origin` saying whose code raised it. The innermost frame of the traceback
  that is either the adapter's (the modules of its class and their package) or convdiff's (harness/, and the
  contract and helpers in backends/) decides; frames in a framework or library are passed over, so an
  exception a library raises on the adapter's call is the adapter's. The message ends with that file and line.
"""

from __future__ import annotations

import inspect
import math
import traceback
from pathlib import Path
from typing import Any

from backends.base import Crashed, Rejected, RememberedCrash, Unsupported, first_line
from harness.model.case import Case
from harness.numerics.inputs import Inputs

ROOT = Path(__file__).resolve().parents[2]  # convdiff's checkout or installed tree
# convdiff's own code: the engine, and the contract and shared helpers adapters call (not the adapters)
CONVDIFF_CODE = (ROOT / "harness",
                 *(ROOT / "backends" / f for f in ("base.py", "registry.py", "artifacts.py", "digest.py", "pads.py")))
ORIGINS = ("adapter", "convdiff")


def out_of_memory(exc: BaseException) -> BaseException | None:
    """The out-of-memory exception `exc` is or wraps (its __cause__ / __context__ chain), or None."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, MemoryError) or any(c.__name__ == "OutOfMemoryError" for c in type(e).__mro__):
            return e
        e = e.__cause__ or e.__context__
    return None


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""  # unreachable


def case_arrays(case: Case, inputs: Inputs | None) -> str:
    """The sizes of the case's own arrays, as a message names them: x, w, b and the output."""
    if inputs is None:
        return "unknown"
    parts = {"x": inputs.x.nbytes, "w": inputs.w.nbytes, **({"b": inputs.b.nbytes} if inputs.b is not None else {})}
    if case.geometry is not None:
        parts["output"] = math.prod(case.output_shape) * inputs.x.itemsize
    total = sum(parts.values())
    return f"{_size(total)} in all (" + ", ".join(f"{k} {_size(v)}" for k, v in parts.items()) + ")"


def adapter_files(backend: Any) -> tuple[Path, ...]:
    """Where the adapter's code lives: the module of each class of the adapter (Backend itself excluded),
    as its package directory when the module is part of a package, else the module file alone."""
    out = []
    for cls in type(backend).__mro__:
        if cls.__module__ in ("backends.base", "builtins"):
            continue
        try:
            f = Path(inspect.getfile(cls)).resolve()
        except (TypeError, OSError):
            continue
        out.append(f.parent if "." in cls.__module__ or f.name == "__init__.py" else f)
    return tuple(out)


def _within(path: Path, places: tuple[Path, ...]) -> bool:
    return any(path == p or path.is_relative_to(p) for p in places)


def origin_of(exc: BaseException, backend: Any) -> tuple[str, str]:
    """(origin, where): whose code raised `exc` (ORIGINS) and the file:line of its innermost frame there."""
    mine = adapter_files(backend)
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    for frame in reversed(frames):
        path = Path(frame.filename).resolve()
        if _within(path, mine):
            shown = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
            return "adapter", f"{shown}:{frame.lineno}, in {frame.name}"
        if _within(path, CONVDIFF_CODE):
            return "convdiff", f"{path.relative_to(ROOT)}:{frame.lineno}, in {frame.name}"
    return "convdiff", "unknown"


def error_payload(origin: str, where: str, text: str, elapsed: float) -> dict[str, Any]:
    """An `error`: whose it is, in the record (`origin`) and in the message."""
    whose = ("raised in the adapter's code" if origin == "adapter"
             else "an internal failure of convdiff (please report it)")
    return {"status": "error", "origin": origin, "message": f"{text} ({whose}, at {where})", "duration_s": elapsed}


def failure(exc: BaseException, backend: Any, case: Case, inputs: Inputs | None, elapsed: float) -> dict[str, Any]:
    """The payload for an exception out of an adapter call (the module docstring)."""
    if isinstance(exc, Unsupported):
        return {"status": "unsupported", "message": str(exc), "duration_s": elapsed}
    oom = out_of_memory(exc)
    if oom is not None:
        return {"status": "crash", "duration_s": elapsed,
                "message": f"out of memory on a case whose own arrays are {case_arrays(case, inputs)}: {first_line(oom)}"}
    if isinstance(exc, Rejected):
        return {"status": "rejected", "message": str(exc), "duration_s": elapsed, "path": getattr(exc, "path", "")}
    if isinstance(exc, Crashed):  # a child process of the framework's died by a signal: a crash, not a refusal
        return {"status": "crash", "message": str(exc), "duration_s": elapsed}
    if isinstance(exc, RememberedCrash):  # the build that kills the worker is not run again (backends/artifacts.py)
        return {"status": "crash", "message": str(exc), "duration_s": elapsed}
    origin, where = origin_of(exc, backend)
    return error_payload(origin, where, first_line(exc), elapsed)
