"""Digest of the arrays a compiled or converted model bakes in (w, b, the epilogue's constants and a quantized
case's scales and zero points): part of a model cache's key, so a case whose inputs change is compiled again."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from harness.model.case import Case
from harness.numerics.inputs import Inputs


def baked_arrays_digest(case: Case, inputs: Inputs, h: Any = None) -> str:
    """sha256 over w, b, every epilogue constant (residuals are model inputs, not constants) and a quantized
    case's parameters (drawn from the seed, y's calibrated from x: neither w nor b determines them);
    `h`: a hash object already holding the rest of the key."""
    h = h or hashlib.sha256()
    arrays: list[tuple[str, Any]] = [("w", inputs.w), ("b", inputs.b)]
    p = inputs.quant
    if p is not None:  # float cases' keys stay as they were
        arrays.append(("quant", np.array([p.x_scale, p.x_zero_point, p.w_zero_point, p.y_scale, p.y_zero_point,
                                          float(p.per_channel), *np.asarray(p.w_scale, dtype=np.float64)])))
    for i, (name, consts) in enumerate(zip(case.epilogue, inputs.epilogue)):
        arrays += [(f"{i}.{name}.{k}", v) for k, v in sorted(consts.items()) if k != "r"]
    for label, arr in arrays:
        h.update(label.encode())
        if arr is None:
            h.update(b"none")
            continue
        a = np.ascontiguousarray(arr)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()
