"""Quantized convolution (dtype uint8 | int8): its inputs from the seed, and the exact oracle.

Inputs: x in the case dtype (uint8 or int8), w int8 (zero point 0 unless pinned), bias int32 at
scale x_scale * w_scale (per output channel when `per_channel`). Unpinned scales and zero points
are drawn from the seed, every scale exactly a float32 value (what frameworks store). `range:
full` draws x over the whole dtype and w over [-127, 127]; `narrow` draws both within 8 of their
zero points. y's scale and zero point are calibrated as a user's tooling does it: from the range
(extended to include 0) of the float reference output, so y uses the whole dtype.

Truth (the ONNX QLinearConv definition), exactly:

    acc = sum((x - x_zp) * (w - w_zp)) + bias                  integers (exact in float64: |acc| < 2^53)
    y   = saturate(round_half_to_even(acc * x_scale * w_scale / y_scale) + y_zp)

with the multiplier in float64. The bound is one unit of y (harness/numerics/bound.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.model.case import Case, Quant
from harness.numerics.oracle import convolve, windows

LIMITS = {"uint8": (0, 255), "int8": (-128, 127)}
STORAGE = {"uint8": np.uint8, "int8": np.int8}
NARROW = 8  # narrow data: within this many steps of the zero point
INT16 = (-32768, 32767)


@dataclass(frozen=True)
class QParams:
    """The quantization parameters of one case, pinned or drawn (w_scale: one per output channel)."""

    x_scale: float
    x_zero_point: int
    w_scale: np.ndarray
    w_zero_point: int
    y_scale: float
    y_zero_point: int
    per_channel: bool


def _f32(v: float) -> float:
    return float(np.float32(v))


def _log_uniform(rng: np.random.Generator, lo: float, hi: float, size: int | None = None) -> np.ndarray | float:
    return 10.0 ** rng.uniform(lo, hi, size=size)


def neutral(case: Case) -> QParams:
    """An invalid case's parameters (no output to calibrate y from): the pinned ones, else scales 1 and
    zero points 0, so an adapter can build the model and the framework decide whether to run it."""
    q = case.quant or Quant()
    c = case.out_channels
    sw = np.asarray(q.w_scale if isinstance(q.w_scale, tuple) else [q.w_scale or 1.0] * c, dtype=np.float64)
    return QParams(x_scale=q.x_scale or 1.0, x_zero_point=q.x_zero_point or 0, w_scale=sw,
                   w_zero_point=q.w_zero_point or 0, y_scale=q.y_scale or 1.0, y_zero_point=q.y_zero_point or 0,
                   per_channel=bool(q.per_channel))


def draw(case: Case, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, QParams]:
    """(x in the case layout, w, bias int32 or None, QParams), drawn in this order."""
    q = case.quant or Quant()
    qmin, qmax = LIMITS[case.dtype]
    zx = q.x_zero_point if q.x_zero_point is not None else int(
        rng.integers(96, 160) if case.dtype == "uint8" else rng.integers(-16, 17))
    zw = q.w_zero_point if q.w_zero_point is not None else 0
    x_shape, w_shape = (case.batch, case.in_channels, *case.input_size), case.weight_shape
    if q.range == "full":
        x = rng.integers(qmin, qmax + 1, size=x_shape)
        w = rng.integers(-127, 128, size=w_shape)
    else:
        x = np.clip(zx + rng.integers(-NARROW, NARROW + 1, size=x_shape), qmin, qmax)
        w = np.clip(zw + rng.integers(-NARROW, NARROW + 1, size=w_shape), -128, 127)
    sx = _f32(q.x_scale if q.x_scale is not None else _log_uniform(rng, -2.5, -1.5))
    c = case.out_channels
    if q.w_scale is not None:
        sw = np.asarray(q.w_scale if isinstance(q.w_scale, tuple) else [q.w_scale] * c, dtype=np.float64)
    elif q.per_channel:
        sw = np.asarray(_log_uniform(rng, -3.0, -2.0, size=c))
    else:
        sw = np.full(c, _log_uniform(rng, -3.0, -2.0))
    sw = sw.astype(np.float32).astype(np.float64)
    b = np.rint(rng.standard_normal(c) * 0.5 / (sx * sw)).astype(np.int32) if case.bias else None
    acc = accumulate(case, x, w, b, zx, zw)
    real = acc * (sx * _channel(sw, acc.ndim))
    lo, hi = min(float(real.min(initial=0.0)), 0.0), max(float(real.max(initial=0.0)), 0.0)
    sy = q.y_scale if q.y_scale is not None else _f32((hi - lo) / (qmax - qmin) if hi > lo else 1.0)
    zy = q.y_zero_point if q.y_zero_point is not None else int(np.clip(np.rint(qmin - lo / sy), qmin, qmax))
    if case.channels_last:
        x = np.moveaxis(x, 1, -1)
    params = QParams(sx, zx, sw, zw, float(sy), zy, q.per_channel or isinstance(q.w_scale, tuple))
    return (np.ascontiguousarray(x).astype(STORAGE[case.dtype]), w.astype(np.int8), b, params)


def _channel(v: np.ndarray, ndim: int) -> np.ndarray:
    """A per-output-channel vector broadcast against (N, C, *spatial)."""
    return v.reshape(1, -1, *(1,) * (ndim - 2))


def accumulate(case: Case, x_nc: np.ndarray, w: np.ndarray, b: np.ndarray | None, zx: int, zw: int) -> np.ndarray:
    """The exact int64 accumulator (N, C_out, *out), x channels first."""
    xs = np.asarray(x_nc, dtype=np.float64) - zx
    ws = np.asarray(w, dtype=np.float64) - zw
    acc = convolve(case, xs, ws, None if b is None else np.asarray(b, dtype=np.float64))
    return np.rint(acc).astype(np.int64)


def requantize(case: Case, acc: np.ndarray, p: QParams) -> np.ndarray:
    """saturate(round_half_to_even(acc * x_scale * w_scale / y_scale) + y_zp), as int64."""
    qmin, qmax = LIMITS[case.dtype]
    m = p.x_scale * _channel(p.w_scale, acc.ndim) / p.y_scale
    return np.clip(np.rint(acc * m) + p.y_zero_point, qmin, qmax).astype(np.int64)


def quant_reference(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray | None,
                    p: QParams) -> tuple[np.ndarray, np.ndarray]:
    """(y as float64 integers, |acc| as float64) in the case layout."""
    x_nc = np.moveaxis(x, -1, 1) if case.channels_last else x
    acc = accumulate(case, x_nc, w, b, p.x_zero_point, p.w_zero_point)
    y = requantize(case, acc, p).astype(np.float64)
    scale = np.abs(acc).astype(np.float64)
    if case.channels_last:
        y, scale = np.moveaxis(y, 1, -1), np.moveaxis(scale, 1, -1)
    return np.ascontiguousarray(y), np.ascontiguousarray(scale)


# ---- a kernel path, simulated: what CPUs without VNNI compute (diagnosis, mutants) -----
def saturated_accumulator(case: Case, x_nc: np.ndarray, w: np.ndarray, b: np.ndarray | None, p: QParams) -> np.ndarray:
    """acc with u8*s8 pair sums saturated to int16 (forward convs; pads hold the zero point)."""
    geo = case.geometry
    assert geo is not None and not case.transpose
    xp = np.pad(x_nc.astype(np.int64), [(0, 0), (0, 0), *geo.pads], constant_values=p.x_zero_point)
    view = windows(xp, case.kernel_size, case.stride, case.dilation, ((0, 0),) * case.rank, case.groups)
    g, cg = case.groups, case.in_channels // case.groups
    wg = w.astype(np.int64).reshape(g, case.out_channels // g, cg, *case.kernel_size)
    if cg % 2:  # the packed inner axis is padded to pairs with zeros
        view = np.concatenate([view, np.zeros_like(view[:, :, :1])], axis=2)
        wg = np.concatenate([wg, np.zeros_like(wg[:, :, :1])], axis=2)
        cg += 1
    r = case.rank
    # products (N, G, O/g, C/g, *out, *k): x over out and k, w over k
    xs = view[:, :, None]                                  # (N, G, 1, C, *out, *k)
    ws = wg.reshape(g, -1, cg, *(1,) * r, *case.kernel_size)[None]  # (1, G, O, C, 1.., *k)
    prod = xs * ws
    pairs = prod.reshape(*prod.shape[:3], cg // 2, 2, *prod.shape[4:]).sum(axis=4)
    sat = np.clip(pairs, *INT16)
    axes = (3, *range(4 + r, 4 + 2 * r))  # channel pairs and kernel positions
    acc = sat.sum(axis=axes)                                # (N, G, O/g, *out)
    wsum = wg.sum(axis=tuple(range(2, 3 + r)))              # (G, O/g)
    acc = acc - p.x_zero_point * wsum.reshape(1, g, -1, *(1,) * r)
    acc = acc.reshape(acc.shape[0], case.out_channels, *acc.shape[3:])
    if b is not None:
        acc = acc + np.asarray(b, dtype=np.int64).reshape(1, -1, *(1,) * r)
    return acc
