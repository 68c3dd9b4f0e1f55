"""QLinearConv and the QDQ Conv with full-range uint8 activations on ONNX Runtime CPU against exact integer arithmetic

Measures a conv1d (one input channel, two taps of 255 x 127) and a 3x3 conv2d on full-range data, in both forms, against
exact integers and against the int16-pair-saturated emulation; prints the CPU's VNNI/AMX flags (MLAS decides from
CPUID).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            return next((set(ln.split(":", 1)[1].split()) for ln in f if ln.startswith("flags")), set())
    except OSError:
        return set()


vnni = sorted(cpu_flags() & {"avx512_vnni", "avx_vnni", "amx_int8"})
print("onnxruntime", ort.__version__, "| CPU VNNI/AMX flags:", vnni or "none")


def model(x_shape: tuple, w: np.ndarray, q: tuple, form: str) -> bytes:
    sx, zx, sw, sy, zy = q
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in (
        ("x_scale", sx, np.float32), ("x_zero_point", zx, np.uint8), ("w", w, np.int8), ("w_scale", sw, np.float32),
        ("w_zero_point", 0, np.int8), ("y_scale", sy, np.float32), ("y_zero_point", zy, np.uint8))]
    if form == "QLinearConv":
        nodes = [helper.make_node("QLinearConv", ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                                                  "y_scale", "y_zero_point"], ["y"])]
    else:
        nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], ["xf"]),
                 helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["wf"]),
                 helper.make_node("Conv", ["xf", "wf"], ["yf"]),
                 helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero_point"], ["y"])]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [None] * len(x_shape))], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    return m.SerializeToString()


def run(x: np.ndarray, w: np.ndarray, q: tuple, form: str) -> np.ndarray:
    sess = ort.InferenceSession(model(x.shape, w, q, form), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0].astype(np.int64)


def exact(x: np.ndarray, w: np.ndarray, q: tuple) -> np.ndarray:
    sx, zx, sw, sy, zy = q
    k = w.shape[2:]
    axes = tuple(range(2, x.ndim))
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64) - zx, k, axis=axes)
    spatial = "ij"[:len(k)]
    taps = "ab"[:len(k)]
    acc = np.einsum(f"nc{spatial}{taps},oc{taps}->no{spatial}", win, w.astype(np.int64))
    m = float(np.float32(sx)) * float(np.float32(sw)) / float(np.float32(sy))
    return np.clip(np.rint(acc * m) + zy, 0, 255)


defect = False
# 1. one input channel, two taps, x = 255, w = 127: exact acc 64770 -> y 65; an int16-saturated pair 32767 -> y 33
x = np.full((1, 1, 2), 255, np.uint8)
w = np.full((2, 1, 2), 127, np.int8)  # two output channels: with one, MLAS takes another (exact) kernel
q = (1.0, 0, 1.0, 1000.0, 0)
for form in ("QLinearConv", "QDQ"):
    y = run(x, w, q, form)
    print(f"{form}: conv1d 1->2, 2 taps, x = 255, w = 127, y_scale 1000: expected {int(exact(x, w, q).max())} "
          f"(int16-saturated pair: 33), got {sorted(set(y.ravel().tolist()))}")
    defect = defect or not np.array_equal(y, exact(x, w, q))

# 2. ordinary full-range data: 3x3 conv2d 16 -> 6, x over 0..255 (zero point 128), w over -127..127
rng = np.random.default_rng(0)
x = rng.integers(0, 256, size=(1, 16, 7, 7)).astype(np.uint8)
w = rng.integers(-127, 128, size=(6, 16, 3, 3)).astype(np.int8)
win = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64) - 128, (3, 3), axis=(2, 3))
real = np.einsum("ncijab,ocab->noij", win, w.astype(np.int64)) * 0.01 * 0.002  # y calibrated over the real range
lo, hi = min(real.min(), 0.0), max(real.max(), 0.0)
sy = float(np.float32((hi - lo) / 255))
q = (0.01, 128, 0.002, sy, int(np.clip(np.rint(-lo / sy), 0, 255)))
ref = exact(x, w, q)
for form in ("QLinearConv", "QDQ"):
    off = np.abs(run(x, w, q, form) - ref)
    print(f"{form}: 3x3 conv2d 16->6, full-range data: max |y - exact| = {int(off.max())} units of y, "
          f"{int((off > 1).sum())}/{off.size} elements off by more than 1")
    defect = defect or off.max() > 1

if not defect:
    print(f"not shown on this host: MLAS's u8 x s8 kernel is exact here (CPU has {', '.join(vnni) or 'no VNNI flag, yet exact'})")
    sys.exit(0)
print("DEFECT: u8 x s8 pair sums saturate at int16")
sys.exit(1)
