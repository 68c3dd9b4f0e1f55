"""tf2onnx turns the Transpose after a one-channel Conv3D into a Reshape to TensorFlow's traced shape, which is wrong when the H and W dilations differ: ONNX Runtime fails

Measures tf2onnx's conversion of tf.nn.conv3d (NDHWC, input 5x6x7, kernel 3, W dilation 2) with 1 and 2 output
channels: TensorFlow's traced shape, the ONNX ops emitted, and whether ONNX Runtime runs the model and matches a
float64 reference. Exits 1 where the one-channel model fails or is wrong.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx


def reference(x: np.ndarray, w: np.ndarray, dil: tuple) -> np.ndarray:
    """VALID NDHWC cross-correlation in float64 with per-axis dilation (D, H, W)."""
    k, n = w.shape[:3], x.shape[1:4]
    out = [n_ - d * (k_ - 1) for n_, k_, d in zip(n, k, dil)]
    y = np.zeros((x.shape[0], *out, w.shape[4]))
    for a, b, c in np.ndindex(*k):
        patch = x[:, a * dil[0]:a * dil[0] + out[0], b * dil[1]:b * dil[1] + out[1], c * dil[2]:c * dil[2] + out[2]]
        y += np.einsum("ndhwi,io->ndhwo", patch, w[a, b, c])
    return y


def conv_with(w_np: np.ndarray):  # noqa: ANN201
    """The conv with its filter a graph constant made inside the trace; H dilation 1, W dilation 2."""
    return lambda t: tf.nn.conv3d(t, tf.constant(w_np), [1] * 5, "VALID", dilations=[1, 1, 1, 2, 1])


def one_line(exc: BaseException) -> str:
    text = re.sub(r"\s+", " ", str(exc)).strip()
    hit = re.search(r"[^.:]*cannot be reshaped[^\]]*\]?[^.]*", text)
    return f"{type(exc).__name__}: {(hit.group(0) if hit else text)[:230]}"


ort.set_default_logger_severity(3)  # the failure is printed below, once
print(f"tensorflow {tf.__version__}, tf2onnx {tf2onnx.__version__}, onnxruntime {ort.__version__}")
rng = np.random.default_rng(0)
x = rng.standard_normal((1, 5, 6, 7, 1)).astype(np.float32)   # N, D, H, W, C
spec = [tf.TensorSpec(x.shape, tf.float32, name="x")]
failed = False
for out_channels in (1, 2):
    w_np = rng.standard_normal((3, 3, 3, 1, out_channels)).astype(np.float32)   # kd, kh, kw, C_in, C_out

    fn = tf.function(conv_with(w_np), autograph=False, input_signature=spec)
    traced = tuple(fn.get_concrete_function().structured_outputs.shape)
    want = reference(x.astype(np.float64), w_np.astype(np.float64), (1, 1, 2))
    try:
        model, _ = tf2onnx.convert.from_function(fn, input_signature=spec)
    except Exception as exc:  # noqa: BLE001 - a conversion failure is reported, not this defect
        print(f"out_channels {out_channels}: tf2onnx failed: {type(exc).__name__}: {str(exc)[:200]}")
        continue
    ops = [n.op_type for n in model.graph.node]
    head = (f"out_channels {out_channels}: traced TF shape {traced}, right {want.shape}; ONNX ops {ops} "
            f"(opset {model.opset_import[0].version})")
    try:
        got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    except Exception as exc:  # noqa: BLE001 - the run-time failure is the defect
        print(f"{head}\n  ONNX Runtime failed: {one_line(exc)}")
        failed = True
        continue
    ok = got.shape == want.shape and np.allclose(got, want, rtol=0, atol=1e-4)
    err = f"max |diff| {np.abs(got - want).max():.1e}" if got.shape == want.shape else "shape differs"
    print(f"{head}\n  ran: output {got.shape}, {err}")
    failed |= not ok

print("defect shown: the converted one-channel model does not run (or is wrong)" if failed else "not reproduced")
sys.exit(1 if failed else 0)
