"""Worker side of a gradient case: run the backward pass, classify each gradient, judge nothing.

`worker.execute` runs the forward first; when the case asks for gradients it adds
`payload["grads"] = {output: sub-payload}`, one per name in `case.gradient_outputs`,
each shaped like a forward payload. A forward that did not produce an output
(unsupported, rejected, error) gives every gradient its status, marked `inherited`:
the framework never reached the backward pass.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from backends.base import Output, Rejected, Unsupported, first_line
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def _failure(exc: BaseException, elapsed: float) -> dict[str, Any]:
    if isinstance(exc, Unsupported):
        return {"status": "unsupported", "message": str(exc), "duration_s": elapsed}
    if isinstance(exc, Rejected):
        return {"status": "rejected", "message": str(exc), "duration_s": elapsed}
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" (at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})" if frame else ""
    return {"status": "error", "message": first_line(exc) + where, "duration_s": elapsed}


def _ok(out: Output, elapsed: float) -> dict[str, Any]:
    return {
        "status": "ok", "array": out.array, "dtype": out.dtype, "tf32": out.tf32,
        "translation": "\n".join([*(f"# exact identity: {n}" for n in out.notes), out.translation]),
        "duration_s": elapsed,
    }


def execute_gradients(backend: Any, case: Case, inputs: Inputs, device: str,
                      forward: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One sub-payload per requested gradient (see the module docstring)."""
    names = case.gradient_outputs
    if forward["status"] != "ok":
        why = f"forward {forward['status']}: {forward.get('message', '')}"
        return {k: {"status": forward["status"], "message": why, "duration_s": 0.0, "inherited": True} for k in names}
    start = time.perf_counter()
    try:
        assert inputs.dy is not None, "a gradient case without dy"
        results: dict[str, Any] = backend.run_gradients(case, inputs, inputs.dy, device)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not kill the worker
        failed = _failure(exc, time.perf_counter() - start)
        return {k: dict(failed) for k in names}
    elapsed = time.perf_counter() - start
    out: dict[str, dict[str, Any]] = {}
    for k in names:
        r = results.get(k)
        if isinstance(r, Output):
            out[k] = _ok(r, elapsed)
        elif isinstance(r, BaseException):
            out[k] = _failure(r, elapsed)
        else:
            out[k] = {"status": "error", "message": f"{backend.name}.run_gradients returned no {k}", "duration_s": elapsed}
    return out
