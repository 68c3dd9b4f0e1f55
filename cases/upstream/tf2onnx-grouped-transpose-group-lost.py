"""A grouped conv2d_transpose converts to a ConvTranspose without group: wrong output channels, or a model ONNX Runtime refuses

Kind: wrong-value
Ask: a fix: set ConvTranspose's group from the shapes (output channels / filter output depth), as the Conv2D handler does.

What happens: `tf.nn.conv2d_transpose` with a filter of depth C_out / groups (4 -> 6 channels, 2 groups), which TensorFlow runs with oneDNN, converts to a ConvTranspose with no `group` attribute. ONNX Runtime returns (1, 7, 7, 3) where TensorFlow gives (1, 7, 7, 6), or, for other shapes, refuses the weights. The same ConvTranspose node built by hand with group=2 runs in ONNX Runtime and matches TensorFlow.

Expected: ONNX ConvTranspose takes the groups in its `group` attribute, W of shape (C_in, C_out / group, kH, kW) (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html).

Mechanism: `tf2onnx/onnx_opset/nn.py`: the Conv handler computes `groups = shape_dim // filter_in_channels` and sets `group` (lines 380-392 on main, 6537fcb); the Conv2DBackpropInput (ConvTranspose) handler sets no `group`, except for the depthwise case (line 660).
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # TensorFlow runs a grouped conv2d_transpose only through oneDNN
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx

print("tensorflow", tf.__version__, "| tf2onnx", tf2onnx.__version__, "| onnxruntime", ort.__version__)
w = np.random.default_rng(0).standard_normal((3, 3, 3, 4)).astype(np.float32)  # (kh, kw, C_out / groups, C_in): 2 groups
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 7, 7, 6], 1, "VALID"))
model, _ = tf2onnx.convert.from_function(f, [tf.TensorSpec([1, 5, 5, 4], tf.float32, name="x")], opset=15)
x = np.random.default_rng(1).standard_normal((1, 5, 5, 4)).astype(np.float32)
try:
    got = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
except Exception as exc:  # one form of the defect: ONNX Runtime refuses the weights
    got = str(exc).strip().splitlines()[-1][:160]
print("ConvTranspose group:", [a.i for n in model.graph.node for a in n.attribute if a.name == "group"] or "not set", "| TensorFlow:", f(x).shape, "| ONNX Runtime:", getattr(got, "shape", got))
sys.exit(0 if not isinstance(got, str) and got.shape == f(x).shape and np.allclose(got, f(x), atol=1e-4) else 1)
