"""Conv3D with different H and W dilations and one output channel converts to a Reshape that ONNX Runtime cannot run

Kind: wrong-value
Ask: a fix: take the Reshape's target from the emitted Conv's shape, not from TensorFlow's recorded one.

What happens: `tf2onnx.convert.from_function` of `tf.nn.conv3d` (NDHWC, 5x6x7 input, kernel 3, one output channel, width dilation 2) emits Reshape -> Conv -> Reshape, and ONNX Runtime fails: "The input tensor cannot be reshaped to the requested shape. Input shape:{1,1,3,4,3}, requested shape:{1,3,2,5,1}".

Expected: a model of the convolution's shape (1, 3, 4, 3, 1).

Mechanism: `tf2onnx/optimizer/transpose_optimizer.py` `post_optimize_action` (lines 93-107, also on main) turns a Transpose that moves only size-1 axes into a Reshape to the recorded shape, here TensorFlow's traced Conv3D shape, whose H and W dilations are swapped.
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # TF's CPU Conv3D runs a dilation only through oneDNN: for the expected values
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx

print("tensorflow", tf.__version__, "| tf2onnx", tf2onnx.__version__, "| onnxruntime", ort.__version__)
f = tf.function(lambda x: tf.nn.conv3d(x, tf.ones((3, 3, 3, 1, 1)), [1] * 5, "VALID", dilations=[1, 1, 1, 2, 1]))  # 1 channel
model, _ = tf2onnx.convert.from_function(f, [tf.TensorSpec([1, 5, 6, 7, 1], tf.float32, name="x")], opset=15)
x = np.random.default_rng(0).standard_normal((1, 5, 6, 7, 1)).astype(np.float32)
want = f(x).numpy()
try:
    got = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
except Exception as exc:  # the defect: the emitted Reshape does not fit
    got = str(exc).split("was false. ")[-1]
print("ops:", [n.op_type for n in model.graph.node], "| TensorFlow:", want.shape, "| ONNX Runtime:", getattr(got, "shape", got))
sys.exit(0 if not isinstance(got, str) and np.allclose(got, want, atol=1e-5) else 1)
