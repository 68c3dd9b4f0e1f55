"""tf2onnx turns the Transpose after a one-channel Conv3D into a Reshape to TensorFlow's traced shape, which is wrong when the H and W dilations differ: ONNX Runtime fails

Project: onnx/tensorflow-onnx (https://github.com/onnx/tensorflow-onnx/issues)
Upstream: none found
Related: https://github.com/onnx/tensorflow-onnx/issues/1464 (Transpose to Reshape goes wrong after an NDHWC Conv3D, another cause); https://github.com/onnx/tensorflow-onnx/pull/369 (Conv output shapes feed the transpose optimizer's Reshape); https://github.com/tensorflow/tensorflow/issues/113318 (a related TensorFlow shape-inference bug)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, tf2onnx 1.17.0, onnxruntime 1.32.0, searched onnx/tensorflow-onnx issues for "transpose optimizer replaces Transpose with Reshape wrong shape conv3d dilation", "cannot be reshaped to the requested shape conv3d"

What happens: a tf.function computing tf.nn.conv3d(x, w, [1] * 5, "VALID", dilations=[1, 1, 1, 2, 1]) over a
(1, 5, 6, 7, 1) NDHWC input with a 3x3x3 kernel and ONE output channel converts (tf2onnx.convert.from_function,
default opset 15) to a model whose NCDHW -> NDHWC Transpose after the Conv became a Reshape to TensorFlow's traced
Conv3D shape. That shape is wrong (TensorFlow's Conv3D shape function swaps the H and W dilations: traced
(1, 3, 2, 5, 1), right (1, 3, 4, 3, 1)), so ONNX Runtime fails at run time: "The input tensor cannot be
reshaped to the requested shape". With two output channels the Transpose stays, the model runs and matches a
float64 NumPy reference to 2e-6.

Expected: the converted model computes the convolution: output (1, 3, 4, 3, C_out), matching the float64
NumPy reference of the VALID dilated convolution. A Transpose that only moves a size-1 axis may become a
Reshape, but to the shape the Conv produces (known from the ONNX Conv's own attributes), not to a
TensorFlow static shape that disagrees with it.

Mechanism: the wrong static shape comes from TensorFlow (tensorflow/core/framework/common_shape_fns.cc
Conv3DShape reads dilation_cols = dilations[2]; dilation_rows = dilations[3] for NDHWC; the subject of
a separate TensorFlow report). tf2onnx keeps TensorFlow's shapes on the converted nodes, and its transpose optimizer
(tf2onnx/optimizer/transpose_optimizer.py, post_optimize_action: a Transpose that only moves a size-1 axis
becomes a Reshape) writes the new shape from those, without checking it against what the ONNX Conv computes
from its own attributes. A cross-check of the Conv's output shape (or inferring it with ONNX shape inference)
would avoid depending on the TensorFlow bug.

Host: any.
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
