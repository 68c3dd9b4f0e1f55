"""ONNX Runtime QLinearConv (and the QDQ Conv it fuses into one) with u8 activations over their full range and
s8 weights in [-127, 127], against exact integers. On an x86 CPU without VNNI (AVX512_VNNI, AVX_VNNI, AMX),
MLAS multiplies u8 x s8 with vpmaddubsw, adding two adjacent products of the im2col row into a saturating
int16. ORT's quantization guide documents the overflow for this path and recommends reduce_range or U8U8;
nothing warns at run time. With VNNI every line prints 0."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

print("onnxruntime", ort.__version__)


def qlinearconv(x, w, sx, zx, sw, sy, zy):
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in (
        ("sx", sx, np.float32), ("zx", zx, np.uint8), ("w", w, np.int8), ("sw", sw, np.float32),
        ("zw", 0, np.int8), ("sy", sy, np.float32), ("zy", zy, np.uint8))]
    node = helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [None] * x.ndim)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0].astype(np.int64)


# 1. The smallest: one input channel, two taps, x = 255, w = 127. Exact acc = 64770 -> y = 65; saturated 32767 -> 33.
# Two output channels: with one, MLAS takes another kernel, which is exact.
for cout in (1, 2):
    y = qlinearconv(np.full((1, 1, 2), 255, np.uint8), np.full((cout, 1, 2), 127, np.int8), 1.0, 0, 1.0, 1000.0, 0)
    print(f"conv1d 1->{cout}, k=2, x=255, w=127: y = {y.ravel().tolist()}, exact 65 (int16-saturated pair: 33)")

# 2. Ordinary data: random full-range x (zero point 128) and w, a 3x3 conv2d, 16 -> 6 channels.
rng = np.random.default_rng(0)
cin, cout, k, L, zx, sx, sw = 16, 6, 3, 7, 128, 0.01, 0.002
x = rng.integers(0, 256, size=(1, cin, L, L)).astype(np.uint8)
w = rng.integers(-127, 128, size=(cout, cin, k, k)).astype(np.int8)
xs = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64) - zx, (k, k), axis=(2, 3))  # (1, cin, 5, 5, k, k)
acc = np.einsum("ncijab,ocab->noij", xs, w.astype(np.int64))
lo, hi = min(acc.min(), 0) * sx * sw, max(acc.max(), 0) * sx * sw
sy = float(np.float32((hi - lo) / 255)); zy = int(np.clip(np.rint(-lo / sy), 0, 255))
exact = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
off = np.abs(qlinearconv(x, w, sx, zx, sw, sy, zy) - exact)
print(f"conv2d: max |y - exact| = {off.max():.0f} units of y on {int((off > 1).sum())}/{off.size} elements")
