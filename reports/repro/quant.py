"""Standalone reproducers for quantized (uint8/int8) results: NumPy plus the one framework stack.

The script has three parts. The first (`reference_source`) draws x, w, the int32 bias and the
quantization parameters from the seed with the same generator calls, in the same order, as
harness/numerics/quant.py `draw` (pinned values from the case, y's scale and zero point
calibrated from the float range of the exact accumulator), and computes the truth its own way:
the exact int64 accumulator of (x - x_zp)(w - w_zp) plus the bias (a transposed conv as the
stride-1 correlation of the zero-stuffed input with the flipped kernel), then ONNX QLinearConv's
requantization. The second is the backend's `run_framework(x, w, b) -> (y, dtype name, rounding)`,
reproducing what its adapter does (reports/repro/quant_torch.py, quant_onnx.py, quant_litert.py,
executorch.py, iree.py). The third (QUANT_VERDICT) judges in units of y, allowing what
harness/numerics/bound.py `quant_units` allows for the rounding the kernel declares (the adapter's
`Output.quant_rounding`, which reaches the judge in the worker's payload, not the record: each
template states it, litert's reads it live as its adapter does).

Dispatched from reports/repro/script.py `script_for` for every quantized record.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.execution.records import Record
from harness.model.case import Case, Quant
from harness.numerics.bound import QUANT_ROUNDING, QUANT_SLACK
from reports.repro.executorch import EXECUTORCH_QUANT_TEMPLATES
from reports.repro.iree import IREE_QUANT_TEMPLATES
from reports.repro.quant_litert import LITERT_TEMPLATES
from reports.repro.quant_onnx import ONNX_TEMPLATES
from reports.repro.quant_torch import TORCH_TEMPLATES
from reports.repro.registry import ReproUnavailable

QuantTemplate = Callable[[Record, Case], str]
QUANT_TEMPLATES: dict[str, QuantTemplate] = {**TORCH_TEMPLATES, **ONNX_TEMPLATES, **LITERT_TEMPLATES,
                                             **EXECUTORCH_QUANT_TEMPLATES, **IREE_QUANT_TEMPLATES}
LIMITS = {"uint8": (0, 255), "int8": (-128, 127)}


def quant_script(rec: Record, case: Case) -> str:
    """The whole script for one quantized forward result."""
    make = QUANT_TEMPLATES.get(rec.backend)
    if rec.backend.startswith(("mutant:", "fault:")):
        raise ReproUnavailable(f"{rec.backend} is one of convdiff's test doubles: on a quantized case it is the "
                               "harness's own integer arithmetic (backends/testing/), no framework to reproduce")
    if make is None:
        raise ReproUnavailable(f"no standalone quantized script for {rec.backend} (written for: "
                               f"{', '.join(sorted(QUANT_TEMPLATES))}); the record's translation shows its calls")
    runner = make(rec, case).strip("\n")
    return "\n".join([reference_source(rec, case), runner, "", QUANT_VERDICT])


def _pinned(q: Quant) -> dict[str, object]:
    w_scale = list(q.w_scale) if isinstance(q.w_scale, tuple) else q.w_scale
    return {"x_scale": q.x_scale, "x_zero_point": q.x_zero_point, "w_scale": w_scale,
            "w_zero_point": q.w_zero_point, "y_scale": q.y_scale, "y_zero_point": q.y_zero_point}


def reference_source(rec: Record, case: Case) -> str:
    """The script up to the framework part: constants, inputs and parameters from the seed, the truth."""
    geo = case.geometry
    assert geo is not None and case.quantized
    q = case.quant or Quant()
    per_channel = q.per_channel or isinstance(q.w_scale, tuple)
    err = "" if rec.max_abs_err is None else f", max |err| {rec.max_abs_err:g} units of y"
    err += "" if rec.bound_ratio is None else f", error/bound {rec.bound_ratio:.4g}"
    known = f"\nconvdiff matched it to the known issue {rec.known_issue}." if rec.known_issue else ""
    qmin, qmax = LIMITS[case.dtype]
    return f'''#!/usr/bin/env python3
"""Reproduce convdiff result {rec.file}::{rec.case_id} on {rec.backend} {rec.backend_version} ({rec.device}).

A quantized convolution: {case.dtype} activations and output, int8 weights, int32 bias.
convdiff recorded: {rec.status}{err}{f", diagnosis {rec.diagnosis}" if rec.diagnosis else ""}.{known}
Truth (ONNX QLinearConv): acc = sum((x - x_zp) * (w - w_zp)) + bias exactly in integers, then
y = saturate(round_half_to_even(acc * x_scale * w_scale / y_scale) + y_zp). Errors are in units of y.
Needs only NumPy and the framework. Exit status 1 when the output is beyond the bound.
"""
import sys

import numpy as np

# The case ({case.op}, PyTorch semantics): padding resolved to explicit (before, after) pairs.
OP, SEED, DTYPE, LAYOUT, DEVICE = {case.op!r}, {case.seed}, {case.dtype!r}, {case.layout!r}, {rec.device!r}
BATCH, C_IN, C_OUT, GROUPS, BIAS = {case.batch}, {case.in_channels}, {case.out_channels}, {case.groups}, {case.bias}
INPUT, KERNEL, STRIDE, DILATION = {case.input_size}, {case.kernel_size}, {case.stride}, {case.dilation}
PADS, EXTEND = {geo.pads}, {geo.extend}  # EXTEND: transposed output tail (output_padding / SAME)
TRANSPOSE = {case.transpose}
W_SHAPE = {case.weight_shape}
QMIN, QMAX = {qmin}, {qmax}
RANGE, PER_CHANNEL = {q.range!r}, {per_channel}  # full: the whole dtype; narrow: within 8 of the zero points
PINNED = {_pinned(q)!r}  # None: drawn from the seed
# rho per declared requantization rounding (convdiff harness/numerics/bound.py): the bound is
# floor(rho + {QUANT_SLACK!r} + 1/2) units of y (the multiplier's float32/Q31 error on |v| < 2^9 is the middle term)
ROUNDING_RHO = {QUANT_ROUNDING!r}
QUANT_SLACK = {QUANT_SLACK!r}

# ---- inputs and quantization parameters, drawn as convdiff draws them ----------------------
rng = np.random.default_rng(SEED)
x_zp = PINNED["x_zero_point"]
if x_zp is None:
    x_zp = int(rng.integers(96, 160) if DTYPE == "uint8" else rng.integers(-16, 17))
w_zp = PINNED["w_zero_point"] if PINNED["w_zero_point"] is not None else 0
X_SHAPE = (BATCH, C_IN, *INPUT)  # channels first, as convdiff draws x
if RANGE == "full":
    x = rng.integers(QMIN, QMAX + 1, size=X_SHAPE)
    w = rng.integers(-127, 128, size=W_SHAPE)
else:
    x = np.clip(x_zp + rng.integers(-8, 9, size=X_SHAPE), QMIN, QMAX)
    w = np.clip(w_zp + rng.integers(-8, 9, size=W_SHAPE), -128, 127)
x_scale = float(np.float32(PINNED["x_scale"] if PINNED["x_scale"] is not None else 10.0 ** rng.uniform(-2.5, -1.5)))
if PINNED["w_scale"] is not None:
    pinned = PINNED["w_scale"]
    w_scale = np.asarray(pinned if isinstance(pinned, list) else [pinned] * C_OUT, dtype=np.float64)
elif PER_CHANNEL:
    w_scale = 10.0 ** rng.uniform(-3.0, -2.0, size=C_OUT)
else:
    w_scale = np.full(C_OUT, 10.0 ** rng.uniform(-3.0, -2.0))
w_scale = w_scale.astype(np.float32).astype(np.float64)  # one per output channel, float32 values
b = np.rint(rng.standard_normal(C_OUT) * 0.5 / (x_scale * w_scale)).astype(np.int32) if BIAS else None


# ---- the truth: exact integers ---------------------------------------------------------------
def pad_or_crop(a, pairs):
    """Pad (positive) or crop (negative) the spatial dims of a (N, C, *L) by (before, after) pairs, with 0."""
    a = np.pad(a, [(0, 0), (0, 0), *((max(lo, 0), max(hi, 0)) for lo, hi in pairs)])
    return a[(slice(None), slice(None), *(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(pairs, a.shape[2:])))]


def correlate(xs, ws, stride):
    """int64 grouped cross-correlation of xs (N, C, *L) with ws (O, C/GROUPS, *k), dilation DILATION."""
    n, c, *size = xs.shape
    o, cg, *k = ws.shape
    og = o // GROUPS
    out = [(m - d * (kk - 1) - 1) // s + 1 for m, kk, s, d in zip(size, k, stride, DILATION)]
    acc = np.zeros((n, o, *out), dtype=np.int64)
    for g in range(GROUPS):
        xg, wg = xs[:, g * cg:(g + 1) * cg], ws[g * og:(g + 1) * og]
        for tap in np.ndindex(*k):
            win = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, DILATION, out, stride))
            # (og, cg) . (n, cg, *out) over cg -> (og, n, *out)
            acc[:, g * og:(g + 1) * og] += np.moveaxis(np.tensordot(wg[(Ellipsis, *tap)], xg[(slice(None), slice(None), *win)], axes=([1], [1])), 0, 1)
    return acc


def accumulate(x, w, b):
    """acc (N, C_out, *out) in int64: x channels first; the padding is the real 0, i.e. x's zero point."""
    xs, ws = x.astype(np.int64) - x_zp, w.astype(np.int64) - w_zp
    if not TRANSPOSE:
        acc = correlate(pad_or_crop(xs, PADS), ws, STRIDE)
    else:  # zero-stuff x by the stride, pad by the kernel reach (less PADS, plus EXTEND), correlate with the flipped kernel
        n, c, *size = xs.shape
        up = np.zeros((n, c, *((m - 1) * s + 1 for m, s in zip(size, STRIDE))), dtype=np.int64)
        up[(slice(None), slice(None), *(slice(None, None, s) for s in STRIDE))] = xs
        reach = [d * (k - 1) for d, k in zip(DILATION, KERNEL)]
        pairs = [(r - lo, r - hi + e) for r, (lo, hi), e in zip(reach, PADS, EXTEND)]
        og = ws.shape[1]
        wt = ws.reshape(GROUPS, c // GROUPS, og, *KERNEL).swapaxes(1, 2).reshape(GROUPS * og, c // GROUPS, *KERNEL)
        wt = wt[(slice(None), slice(None), *(slice(None, None, -1) for _ in KERNEL))]
        acc = correlate(pad_or_crop(up, pairs), wt, (1,) * len(KERNEL))
    return acc if b is None else acc + b.astype(np.int64).reshape(1, -1, *(1,) * len(KERNEL))


def channel_vec(v):
    return v.reshape(1, -1, *(1,) * len(KERNEL))


acc = accumulate(x, w, b)
real = acc * (x_scale * channel_vec(w_scale))  # y's parameters: calibrated from this range (0 included)
lo, hi = min(float(real.min(initial=0.0)), 0.0), max(float(real.max(initial=0.0)), 0.0)
y_scale = PINNED["y_scale"]
if y_scale is None:
    y_scale = float(np.float32((hi - lo) / (QMAX - QMIN) if hi > lo else 1.0))
y_zp = PINNED["y_zero_point"]
if y_zp is None:
    y_zp = int(np.clip(np.rint(QMIN - lo / y_scale), QMIN, QMAX))
ref = np.clip(np.rint(acc * (x_scale * channel_vec(w_scale) / y_scale)) + y_zp, QMIN, QMAX)  # half to even

XT = np.uint8 if DTYPE == "uint8" else np.int8
x_case = (np.moveaxis(x, 1, -1) if LAYOUT == "channels_last" else x).astype(XT)  # a fresh C-order array, size-1 axes included
w_int8, b_int32 = w.astype(np.int8), b
if LAYOUT == "channels_last":
    ref = np.moveaxis(ref, 1, -1)
print(f"x_scale {{x_scale!r}}, x_zero_point {{x_zp}}; w_scale {{w_scale.tolist() if PER_CHANNEL else float(w_scale[0])!r}}, "
      f"w_zero_point {{w_zp}}; y_scale {{y_scale!r}}, y_zero_point {{y_zp}}")
'''


QUANT_VERDICT = '''
# ---- the verdict, in units of y --------------------------------------------------------------
try:
    out, out_dtype, rounding = run_framework(x_case, w_int8, b_int32)
except Exception as exc:  # the framework refused a valid case
    inner = getattr(exc, "inner_exception", None)  # torch.compile wraps inductor's own exception
    print(f"framework raised: {type(exc).__name__}: {inner if inner is not None else exc}".splitlines()[0])
    print("verdict: " + ("crash" if type(exc).__name__ == "Crashed" else "rejected"))  # a tool killed by a signal
    sys.exit(1)
units = float(np.floor(ROUNDING_RHO[rounding] + QUANT_SLACK + 0.5))
print(f"requantization the kernel declares: {rounding}; allowed: {units:g} unit(s) of y")
if out.shape != ref.shape:
    print(f"output shape {out.shape}, expected {ref.shape}")
    verdict = "shape_mismatch"
elif out_dtype != DTYPE:
    print(f"output dtype {out_dtype}, expected {DTYPE}")
    verdict = "mismatch"
else:
    err = np.abs(out.astype(np.float64) - ref)
    ratio = err / units
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else ()
    print(f"max |err| = {err.max(initial=0.0):.6g}; error/bound = {ratio.max(initial=0.0):.6g} at index {tuple(map(int, worst))}")
    print(f"{int((ratio > 1).sum())}/{ratio.size} elements beyond the bound (units of y)")
    verdict = "pass" if not (ratio > 1).any() else "mismatch"
print(f"verdict: {verdict}")
sys.exit(0 if verdict == "pass" else 1)
'''
