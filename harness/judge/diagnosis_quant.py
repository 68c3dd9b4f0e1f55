"""Name the bug class of a quantized (uint8/int8) mismatch: the exact oracle under one classic int8 mistake.

* `quant_int16_pair_saturation`: the `vpmaddubsw` path of CPUs without VNNI. Raw u8 activations
  times s8 weights are summed in adjacent pairs into int16, which saturates at +-32767; the zero
  point is taken out afterwards (acc = sum(sat16(x0*w0 + x1*w1)) - x_zp * sum(w) + bias).
  Full-range data reaches 2*255*127. Tried with both packings of the reduction axis
  (harness/numerics/quant.py `saturated_accumulator`): channel pairs at one tap (oneDNN) and the
  flat im2col row (fbgemm, MLAS), forward and transposed.
* `quant_ignored_zero_point`: the activations' zero point taken as 0 (acc on raw x), or the
  output's left out of the requantization.
* `quant_per_tensor_scale`: per-channel weight scales applied as one (the first channel's).
* `quant_bias_scale_wrong`: the int32 bias dropped, or added in units of y after requantizing.

A wrong rounding mode (half away from zero, truncation) moves results by at most one unit,
which the one-unit bound allows: it cannot be told apart here, so no hypothesis claims it.
`diagnose_quant` returns the first name whose output lies within one unit of the backend's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.quant import LIMITS, PAIRINGS, QParams, accumulate, requantize, saturated_accumulator

UNITS = 1.0


def _nc(case: Case, x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, -1, 1) if case.channels_last else x


def _layout(case: Case, y: np.ndarray) -> np.ndarray:
    return np.moveaxis(y, 1, -1) if case.channels_last else y


def _out(case: Case, acc: np.ndarray, p: QParams) -> np.ndarray:
    return _layout(case, requantize(case, acc, p).astype(np.float64))


def quant_int16_pair_saturation(case: Case, inputs: Inputs, p: QParams) -> Iterator[np.ndarray]:
    if case.dtype != "uint8" or p.w_zero_point:
        return
    for pairing in PAIRINGS:
        yield _out(case, saturated_accumulator(case, _nc(case, inputs.x), inputs.w, inputs.b, p, pairing), p)


def quant_ignored_zero_point(case: Case, inputs: Inputs, p: QParams) -> Iterator[np.ndarray]:
    x_nc = _nc(case, inputs.x)
    if p.x_zero_point:
        yield _out(case, accumulate(case, x_nc, inputs.w, inputs.b, 0, p.w_zero_point), p)
    if p.y_zero_point:
        acc = accumulate(case, x_nc, inputs.w, inputs.b, p.x_zero_point, p.w_zero_point)
        yield _out(case, acc, dataclasses.replace(p, y_zero_point=0))


def quant_per_tensor_scale(case: Case, inputs: Inputs, p: QParams) -> Iterator[np.ndarray]:
    if p.per_channel and len(set(p.w_scale.tolist())) > 1:
        acc = accumulate(case, _nc(case, inputs.x), inputs.w, inputs.b, p.x_zero_point, p.w_zero_point)
        yield _out(case, acc, dataclasses.replace(p, w_scale=np.full_like(p.w_scale, p.w_scale[0])))


def quant_bias_scale_wrong(case: Case, inputs: Inputs, p: QParams) -> Iterator[np.ndarray]:
    if inputs.b is None or not np.any(inputs.b):
        return
    acc = accumulate(case, _nc(case, inputs.x), inputs.w, None, p.x_zero_point, p.w_zero_point)
    yield _out(case, acc, p)  # dropped
    qmin, qmax = LIMITS[case.dtype]
    m = p.x_scale * p.w_scale.reshape(1, -1, *(1,) * case.rank) / p.y_scale
    b = np.asarray(inputs.b, dtype=np.float64).reshape(1, -1, *(1,) * case.rank)
    yield _layout(case, np.clip(np.rint(acc * m + b) + p.y_zero_point, qmin, qmax))  # in units of y


HYPOTHESES = [quant_int16_pair_saturation, quant_ignored_zero_point, quant_per_tensor_scale, quant_bias_scale_wrong]


def diagnose_quant(case: Case, inputs: Inputs, out64: np.ndarray, canonical: np.ndarray) -> str | None:
    """The hypothesis whose output is within one unit of `out64` everywhere, and not of the canonical one."""
    p = inputs.quant
    if p is None or case.geometry is None:
        return None
    for hypothesis in HYPOTHESES:
        for alt in hypothesis(case, inputs, p):
            if alt.shape != out64.shape:
                continue
            if np.all(np.abs(alt - canonical) <= UNITS):
                continue  # indistinguishable from the canonical output here: explains nothing
            if np.all(np.abs(out64 - alt) <= UNITS):
                return hypothesis.__name__
    return None
