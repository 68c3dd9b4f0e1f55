#!/usr/bin/env python3
"""Reproduce convdiff result fuzz-cases.yaml::fuzz_32_175_openvino_min on openvino 2026.4.1 (cpu)
(known issue openvino-int8-grouped-conv3d-padding: a grouped uint8 conv3d with padding is wrong on its border).

A quantized convolution: uint8 activations and output, int8 weights, int32 bias.
convdiff recorded: mismatch, max |err| 209 units of y, error/bound 209.
Truth (ONNX QLinearConv): acc = sum((x - x_zp) * (w - w_zp)) + bias exactly in integers, then
y = saturate(round_half_to_even(acc * x_scale * w_scale / y_scale) + y_zp). Errors are in units of y.
Needs only NumPy and the framework. Exit status 1 when the output is beyond the bound.
"""
import sys

import numpy as np

# The case (conv3d, PyTorch semantics): padding resolved to explicit (before, after) pairs.
OP, SEED, DTYPE, LAYOUT, DEVICE = 'conv3d', 378862823, 'uint8', 'channels_first', 'cpu'
BATCH, C_IN, C_OUT, GROUPS, BIAS = 1, 2, 4, 2, False
INPUT, KERNEL, STRIDE, DILATION = (1, 1, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1)
PADS, EXTEND = ((0, 0), (0, 0), (0, 1)), (0, 0, 0)  # EXTEND: transposed output tail (output_padding / SAME)
TRANSPOSE = False
W_SHAPE = (4, 1, 1, 1, 1)
QMIN, QMAX = 0, 255
RANGE, PER_CHANNEL = 'narrow', False  # full: the whole dtype; narrow: within 8 of the zero points
PINNED = {'x_scale': None, 'x_zero_point': None, 'w_scale': None, 'w_zero_point': None, 'y_scale': None, 'y_zero_point': None}  # None: drawn from the seed
# rho per declared requantization rounding (convdiff harness/numerics/bound.py): the bound is
# floor(rho + 0.0001220703125 + 1/2) units of y (the multiplier's float32/Q31 error on |v| < 2^9 is the middle term)
ROUNDING_RHO = {'half_to_even': 0.5, 'half_away_from_zero': 0.5, 'fixed_point_half_away': 1.0, 'truncate': 1.0}
QUANT_SLACK = 0.0001220703125

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
x_case = np.ascontiguousarray(np.moveaxis(x, 1, -1) if LAYOUT == "channels_last" else x).astype(XT)
w_int8, b_int32 = w.astype(np.int8), b
if LAYOUT == "channels_last":
    ref = np.moveaxis(ref, 1, -1)
print(f"x_scale {x_scale!r}, x_zero_point {x_zp}; w_scale {w_scale.tolist() if PER_CHANNEL else float(w_scale[0])!r}, "
      f"w_zero_point {w_zp}; y_scale {y_scale!r}, y_zero_point {y_zp}")

import onnx
import openvino as ov
from onnx import helper, numpy_helper

FORM = 'qdq'  # qlinear: one QLinearConv node; qdq: DequantizeLinear -> Conv -> QuantizeLinear


def initializers(w, b):
    """Initializer name -> array, as convdiff writes them: float32 scales, zero points in their tensor's type."""
    sw = w_scale
    sw_w = sw  # one scale per output channel (axis 0 of w)
    out = {
        "x_scale": np.asarray(x_scale, np.float32), "x_zero_point": np.asarray(x_zp, XT),
        "w": np.ascontiguousarray(w, dtype=np.int8),
        "w_scale": sw_w.astype(np.float32) if PER_CHANNEL else np.asarray(sw[0], np.float32),
        "w_zero_point": np.full(sw_w.shape, w_zp, np.int8) if PER_CHANNEL else np.asarray(w_zp, np.int8),
        "y_scale": np.asarray(y_scale, np.float32), "y_zero_point": np.asarray(y_zp, XT),
    }
    if b is not None:
        out["b"] = np.asarray(b, np.int32)
        if FORM == "qdq":  # the bias scale a quantizer writes: x_scale * w_scale, float32
            prod = np.float32(x_scale) * sw.astype(np.float32)
            out["b_scale"] = prod if PER_CHANNEL else np.asarray(prod[0], np.float32)
    return out


def build_model(w, b):
    """The quantized model convdiff's openvino adapter builds (opset 18)."""
    elem = onnx.TensorProto.UINT8
    nodes = [
        helper.make_node('DequantizeLinear', ['x', 'x_scale', 'x_zero_point'], ['x_f']),
        helper.make_node('DequantizeLinear', ['w', 'w_scale', 'w_zero_point'], ['w_f'], axis=0),
        helper.make_node('Conv', ['x_f', 'w_f'], ['y_f'], kernel_shape=[1, 1, 1], strides=[1, 1, 1], dilations=[1, 1, 1], group=2, pads=[0, 0, 0, 0, 0, 1]),
        helper.make_node('QuantizeLinear', ['y_f', 'y_scale', 'y_zero_point'], ['y']),
    ]
    inits = [numpy_helper.from_array(a, name) for name, a in initializers(w, b).items()]
    graph = helper.make_graph(nodes, "convdiff_quant", [helper.make_tensor_value_info("x", elem, [1, 2, 1, 1, 1])],
                              [helper.make_tensor_value_info("y", elem, [1, 4, 1, 1, 2])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


def run_framework(x, w, b):
    """OpenVINO's CPU plugin, every property at its default; its int8 convolution's precision printed."""
    core = ov.Core()
    compiled = core.compile_model(core.read_model(build_model(w, b).SerializeToString()), "CPU")
    y = np.asarray(compiled({"x": x})[compiled.output(0)])
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        kind = info["layerType"].astype(str) if "layerType" in info else "?"
        if "conv" in kind.lower():
            prec, prim = (info[k].astype(str) if k in info else "?" for k in ("runtimePrecision", "primitiveType"))
            print(f"OpenVINO ran {kind}: {prec}/{prim}")
    return y, str(y.dtype), "half_to_even"


# ---- the verdict, in units of y --------------------------------------------------------------
try:
    out, out_dtype, rounding = run_framework(x_case, w_int8, b_int32)
except Exception as exc:  # the framework refused a valid case
    inner = getattr(exc, "inner_exception", None)  # torch.compile wraps inductor's own exception
    print(f"framework raised: {type(exc).__name__}: {inner if inner is not None else exc}".splitlines()[0])
    print("verdict: rejected")
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
