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
from harness.numerics.oracle import convolve, transpose_operands, windows

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
PAIRINGS = ("channels", "im2col")
_PAIR_CHUNK = 64  # pairs per step: bounds the (N, G, O/g, *out, pairs) intermediate


def saturated_accumulator(case: Case, x_nc: np.ndarray, w: np.ndarray, b: np.ndarray | None, p: QParams,
                          pairing: str = "channels") -> np.ndarray:
    """acc with the raw u8*s8 products summed in adjacent pairs into saturating int16 (`vpmaddubsw`),
    the pair sums then added in int32 and the zero point taken out: acc = sum(sat16(x0*w0 + x1*w1))
    - x_zp * sum(w) + bias. Which products are adjacent is the kernel's packing of the reduction axis:

    * `channels` (oneDNN): two input channels at one kernel tap; an odd channel count is padded with a
      zero channel, so a pair never spans two taps;
    * `im2col` (fbgemm, MLAS): the im2col row of a group, taps outer and channels inner, paired as one
      flat axis (padded with one zero product when odd), so with an odd channel count pairs span taps.

    Transposed convs are computed as the forward conv over the input with copies of the zero point
    inserted (im2col of a transposed conv, fbgemm's way); pads hold the zero point too, so they add
    nothing once it is taken out."""
    geo = case.geometry
    assert geo is not None and pairing in PAIRINGS
    zx, r, g = p.x_zero_point, case.rank, case.groups
    x = x_nc.astype(np.int64)
    w = w.astype(np.int64)
    if case.transpose:
        x, w, pads = transpose_operands(x, w, case.stride, case.dilation, geo.pads, geo.extend, g, fill=zx)
        stride = (1,) * r
    else:
        pads, stride = geo.pads, case.stride
    view = windows(x, case.kernel_size, stride, case.dilation, pads, g, fill=zx)  # (N, G, C/g, *out, *k)
    o = w.shape[0]
    rows = np.moveaxis(view, 2, -1)                                  # (N, G, *out, *k, C/g): channels inner
    wk = np.moveaxis(w.reshape(g, o // g, *w.shape[1:]), 2, -1)      # (G, O/g, *k, C/g)
    if pairing == "channels" and rows.shape[-1] % 2:
        rows = np.concatenate([rows, np.zeros_like(rows[..., :1])], axis=-1)
        wk = np.concatenate([wk, np.zeros_like(wk[..., :1])], axis=-1)
    out = rows.shape[2:2 + r]
    rows = rows.reshape(*rows.shape[:2 + r], -1)
    wk = wk.reshape(g, o // g, -1)
    if rows.shape[-1] % 2:
        rows = np.concatenate([rows, np.zeros_like(rows[..., :1])], axis=-1)
        wk = np.concatenate([wk, np.zeros_like(wk[..., :1])], axis=-1)
    rows = rows.reshape(*rows.shape[:-1], -1, 2)                     # (N, G, *out, P, 2)
    wk = wk.reshape(g, o // g, -1, 2)                                # (G, O/g, P, 2)
    sp = "abcdef"[:r]
    acc = np.zeros((x.shape[0], g, o // g, *out), dtype=np.int64)
    for j in range(0, wk.shape[2], _PAIR_CHUNK):
        pairs = np.einsum(f"NG{sp}Pt,GOPt->NGO{sp}P", rows[..., j:j + _PAIR_CHUNK, :], wk[:, :, j:j + _PAIR_CHUNK])
        acc += np.clip(pairs, *INT16).sum(axis=-1)
    acc -= zx * wk.sum(axis=(2, 3)).reshape(1, g, o // g, *(1,) * r)
    acc = acc.reshape(acc.shape[0], o, *out)
    if b is not None:
        acc = acc + np.asarray(b, dtype=np.int64).reshape(1, -1, *(1,) * r)
    return acc
