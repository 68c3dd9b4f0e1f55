"""Worker side of a gradient case: run the backward pass, classify each gradient, judge nothing.

`worker.execute` runs the forward first; when the case asks for gradients it adds
`payload["grads"] = {output: sub-payload}`, one per name in `case.gradient_outputs`,
each shaped like a forward payload. A forward that did not produce an output
(unsupported, rejected, error) gives every gradient its status, marked `inherited`:
the framework never reached the backward pass; for an adapter with no gradient path at all
the gradients are `unsupported`, as they are when its forward runs.
"""

from __future__ import annotations

import time
from typing import Any

from backends.base import Backend, Output
from harness.execution.failures import error_payload, failure
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def _ok(out: Output, elapsed: float) -> dict[str, Any]:
    return {
        "status": "ok", "array": out.array, "dtype": out.dtype, "tf32": out.tf32,
        "translation": "\n".join([*(f"# exact identity: {n}" for n in out.notes), out.translation]),
        "duration_s": elapsed,
    }


def has_gradient_path(backend: Any) -> bool:
    """Whether the adapter differentiates at all: it overrides run_gradients and declares how."""
    return type(backend).run_gradients is not Backend.run_gradients and backend.capabilities.gradients != "none"


def without_gradient_path(backend: Any, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The gradients of an adapter that never differentiates: unsupported whatever the forward did. A forward
    refusal copied onto them would read as the framework refusing a backward pass it never had; and where the
    forward killed its worker, the controller says the same (harness/judge/verdict.py), so that the verdict
    does not depend on whether the crash happened now or is remembered from an earlier run's cache."""
    why = f"{backend.name}: this adapter has no gradient path (capabilities: gradients none)"
    return {k: {"status": "unsupported", "message": why, "duration_s": 0.0} for k in names}


def execute_gradients(backend: Any, case: Case, inputs: Inputs, device: str,
                      forward: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One sub-payload per requested gradient (see the module docstring)."""
    names = case.gradient_outputs
    if forward["status"] != "ok" and not has_gradient_path(backend):
        return without_gradient_path(backend, names)
    if forward["status"] != "ok":
        why = f"forward {forward['status']}: {forward.get('message', '')}"
        origin = {"origin": forward["origin"]} if "origin" in forward else {}  # an error stays whose it was
        return {k: {"status": forward["status"], "message": why, "duration_s": 0.0, "inherited": True, **origin}
                for k in names}
    start = time.perf_counter()
    try:
        assert inputs.dy is not None, "a gradient case without dy"
        results: dict[str, Any] = backend.run_gradients(case, inputs, inputs.dy, device)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not kill the worker
        failed = failure(exc, backend, case, inputs, time.perf_counter() - start)
        return {k: dict(failed) for k in names}
    elapsed = time.perf_counter() - start
    out: dict[str, dict[str, Any]] = {}
    for k in names:
        r = results.get(k)
        if isinstance(r, Output):
            out[k] = _ok(r, elapsed)
        elif isinstance(r, BaseException):
            out[k] = failure(r, backend, case, inputs, elapsed)
        else:
            out[k] = error_payload("adapter", f"{type(backend).__qualname__}.run_gradients",
                                   f"run_gradients returned no {k}", elapsed)
    return out
