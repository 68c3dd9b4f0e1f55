"""Deterministic inputs from a case's seed, already exact in the case's dtype.

Arrays are stored in the case dtype (bfloat16 via ml_dtypes), so the oracle sees
exactly the values the framework sees: there is no input rounding to account for.
An unbatched case's x is the batch-1 draw without its batch axis. An `expect: invalid` case's tensors have
the shapes and dtypes it states (`weight_shape`, `input_dtype`, `weight_dtype`, `bias_dtype`): integer ones hold
small integers, complex ones a normal real and imaginary part.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from harness.model.case import COMPLEX_DTYPES, Case
from harness.numerics.epilogue import Constants, draw_constants
from harness.numerics.quant import QParams
from harness.numerics.quant import draw as draw_quantized
from harness.numerics.quant import neutral as neutral_quant

NUMPY_DTYPES = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
}
SIGNIFICAND_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


@dataclass(frozen=True)
class Inputs:
    x: np.ndarray  # in the case layout
    w: np.ndarray  # canonical weight layout
    b: np.ndarray | None
    dy: np.ndarray | None = None  # upstream gradient, output shape in the case layout (case.gradients only)
    epilogue: tuple[Constants, ...] = ()  # one mapping of constants per epilogue op (numerics/epilogue.py)
    quant: QParams | None = None  # a quantized case's scales and zero points (numerics/quant.py)


def integer_amplitude(case: Case) -> int:
    """Largest a <= 3 with K*a*a + a < 2**p: then every partial sum of integers in
    [-a, a] is exact in the case dtype. Falls back to 1 (the bound then uses rounding)."""
    p = min(SIGNIFICAND_BITS[case.dtype], 24)
    k = case.accumulation_length
    for a in (3, 2, 1):
        if k * a * a + a < 2**p:
            return a
    return 1


def _draw(rng: np.random.Generator, kind: str, shape: tuple[int, ...], amplitude: int) -> np.ndarray:
    if kind == "integers":
        return rng.integers(-amplitude, amplitude + 1, size=shape).astype(np.float64)
    if kind == "uniform":
        return rng.uniform(-1.0, 1.0, size=shape)
    return rng.standard_normal(shape)


def _stated(rng: np.random.Generator, kind: str, shape: tuple[int, ...], amplitude: int, dtype: str) -> np.ndarray:
    """One tensor of an invalid case in the dtype it states."""
    if dtype in NUMPY_DTYPES:
        return _draw(rng, kind, shape, amplitude).astype(NUMPY_DTYPES[dtype])
    if dtype in COMPLEX_DTYPES:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    low = 0 if dtype.startswith("u") else -3
    return rng.integers(low, 4, size=shape).astype(dtype)


def _invalid_inputs(case: Case, rng: np.random.Generator) -> Inputs:
    """x, w, b of an invalid float case: its shapes (the weight as stated), its per-tensor dtypes."""
    xd, wd, bd = case.tensor_dtypes
    amp = integer_amplitude(case) if case.data == "integers" else 0
    x = _stated(rng, case.data, (case.batch, case.in_channels, *case.input_size), amp, xd)
    w = _stated(rng, case.data, case.weight_shape, amp, wd)
    b = None if bd is None else _stated(rng, case.data, (case.out_channels,), amp, bd)
    if case.channels_last:
        x = np.moveaxis(x, 1, -1)
    return Inputs(x=np.ascontiguousarray(x[0] if case.unbatched else x), w=w, b=b)


def make_inputs(case: Case) -> Inputs:
    """x, w, b (and dy for a gradient case) from the seed; x and dy are generated channels-first,
    so both layouts see the same data. dy is drawn after x, w, b: they do not depend on `gradients`;
    the epilogue's constants come last, so a case keeps its x, w, b when an epilogue is added."""
    rng = np.random.default_rng(case.seed)
    if case.quantized:
        if case.geometry is None:  # an invalid case: integer data in the right dtypes, nothing to calibrate
            return Inputs(x=np.zeros(case.input_shape, np.uint8 if case.dtype == "uint8" else np.int8),
                          w=np.zeros(case.weight_shape, np.int8), b=np.zeros(case.out_channels, np.int32) if case.bias else None,
                          quant=neutral_quant(case))
        x, w, b, params = draw_quantized(case, rng)
        return Inputs(x=x, w=w, b=b, quant=params)
    if case.geometry is None:
        return _invalid_inputs(case, rng)
    dtype = NUMPY_DTYPES[case.dtype]
    amp = integer_amplitude(case) if case.data == "integers" else 0
    x = _draw(rng, case.data, (case.batch, case.in_channels, *case.input_size), amp)
    w = _draw(rng, case.data, case.weight_shape, amp)
    b = _draw(rng, case.data, (case.out_channels,), amp) if case.bias else None
    dy = None
    if case.gradient_outputs and case.geometry is not None:
        dy = _draw(rng, case.data, (case.batch, case.out_channels, *case.geometry.out_size), amp)
    if case.channels_last:
        x = np.moveaxis(x, 1, -1)
        dy = None if dy is None else np.moveaxis(dy, 1, -1)
    if case.unbatched:
        x = x[0]
    epilogue = draw_constants(case, rng, dtype) if case.epilogue and case.geometry is not None else ()
    return Inputs(
        x=np.ascontiguousarray(x).astype(dtype),
        w=np.ascontiguousarray(w).astype(dtype),
        b=None if b is None else b.astype(dtype),
        dy=None if dy is None else np.ascontiguousarray(dy).astype(dtype),
        epilogue=epilogue,
    )
