"""Conv2DBackpropInput with explicit padding converts to a ConvTranspose whose pads come from output_shape alone: values shifted, or negative pads ONNX Runtime refuses

Kind: wrong-value
Ask: a fix: in ConvTranspose.version_1, take the pads from the node's explicit_paddings when padding is EXPLICIT, rather than splitting full - output_shape evenly.

What happens: tf.nn.conv2d_transpose(x, w, [1, 6, 6, 1], strides=2, padding=[[0, 0], [1, 0], [1, 0], [0, 0]]) on a 3x3 input with a 3x3 kernel crops one row and column before and none after. tf2onnx 1.17.0 writes ConvTranspose pads [0, 0, 1, 1] (none before, one after), so ONNX Runtime returns every value shifted by one: first row [1, 1, 3, 2, 5, 3] where TensorFlow gives [1, 3, 2, 5, 3, 3].

Expected: the ONNX model computes what TensorFlow computes: ConvTranspose pads [1, 1, 0, 0] (begin, begin, end, end) for this call (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html).

Mechanism: tf2onnx/onnx_opset/nn.py (v1.17.0, lines 485-495), ConvTranspose.version_1, computes total = full - output_shape per dimension and sets pads int(total / 2) before, the rest after, ignoring the padding attribute; with a negative total the pads are negative.

Symptoms:
- Explicit pads that are not split evenly with the larger half after: every value shifted by one or more positions.
- A crop smaller than the output padding (PyTorch's output_padding, written as VALID with a larger output_shape) and SAME with a dilated kernel shorter than the stride: negative pads, refused by ONNX Runtime ("Attribute pads must not contain negative values").
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx
print("tensorflow", tf.__version__, "| tf2onnx", tf2onnx.__version__, "| onnxruntime", ort.__version__)
w = np.ones((3, 3, 1, 1), np.float32)  # (kh, kw, out, in), a constant in the graph
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 6, 6, 1], 2, [[0, 0], [1, 0], [1, 0], [0, 0]]))  # crop 1 before, 0 after
model, _ = tf2onnx.convert.from_function(f, input_signature=[tf.TensorSpec([1, 3, 3, 1], tf.float32, name="x")], opset=17)
x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
want = f(x).numpy()[0, :, :, 0]
sess = ort.InferenceSession(model.SerializeToString())
got = sess.run(None, {sess.get_inputs()[0].name: x})[0][0, :, :, 0]
pads = [a.ints for n in model.graph.node if n.op_type == "ConvTranspose" for a in n.attribute if a.name == "pads"]
print("ConvTranspose pads in the model:", [list(p) for p in pads])
print("TensorFlow, first row:  ", want[0].tolist())
print("ONNX Runtime, first row:", got[0].tolist())
sys.exit(0 if np.array_equal(got, want) else 1)
