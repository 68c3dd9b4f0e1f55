"""tf.nn.gelu(approximate=False) converts to an Erfc node in the ai.onnx domain, which ONNX Runtime refuses

Kind: valid-refused
Ask: a handler for TensorFlow's Erfc (1 - Erf, which every opset from 9 has), so that exact-GELU models convert below opset 20 too, or a conversion error instead of an invalid model.

What happens: Since TensorFlow 2.16 `tf.nn.gelu(x, approximate=False)` (and `keras.activations.gelu`) is traced as 0.5 * x * erfc(-x / sqrt(2)). `tf2onnx.convert.from_function` logs "Tensorflow op [Erfc] is not supported" and still returns a model with an `Erfc` node in the default domain, which ONNX Runtime refuses: "No Op registered for Erfc with domain_version of 15".

Expected: a model that computes GELU (Erf-based, as before TensorFlow's change; PR #2463, open, needs opset 20).

Mechanism: `tf2onnx/onnx_opset/math.py` handles `Erf` (line 427 on main) but not `Erfc`, and an unsupported op is copied into the graph as is.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx

print("tensorflow", tf.__version__, "| tf2onnx", tf2onnx.__version__, "| onnxruntime", ort.__version__)
f = tf.function(lambda x: tf.nn.gelu(x, approximate=False))
model, _ = tf2onnx.convert.from_function(f, [tf.TensorSpec([5], tf.float32, name="x")], opset=15)
print("ONNX nodes:", [f"{n.domain or 'ai.onnx'}::{n.op_type}" for n in model.graph.node])
x = np.linspace(-2, 2, 5, dtype=np.float32)
try:
    got = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
except Exception as exc:  # the defect: the model is invalid
    got = str(exc).split(" : ")[-1][:160]
print("TensorFlow:", f(x).numpy(), "\nONNX Runtime:", got)
sys.exit(0 if not isinstance(got, str) and np.allclose(got, f(x).numpy(), atol=1e-6) else 1)
