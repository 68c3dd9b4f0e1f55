"""tf2onnx leaves tf.nn.gelu's Erfc in the ai.onnx domain: ONNX Runtime refuses every converted model with an exact GELU

Project: onnx/tensorflow-onnx (https://github.com/onnx/tensorflow-onnx/issues)
Upstream: comment for https://github.com/onnx/tensorflow-onnx/issues/2347
Related: https://github.com/onnx/tensorflow-onnx/pull/2463 (open: a GELU rewriter, needs opset 20); https://github.com/tensorflow/tensorflow/commit/456e26403a7f1203d56b6724e4a0fbe461eab3a3 (TensorFlow's gelu moved from erf to erfc)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, tf2onnx 1.17.0, onnxruntime 1.32.0, searched onnx/tensorflow-onnx issues for "Erfc not supported gelu", "tensorflow op Erfc"

What happens: tf2onnx.convert.from_function on a tf.function computing tf.nn.gelu(x, approximate=False) in
float32 logs "Tensorflow op [...Erfc: Erfc] is not supported" and still returns a model: an `Erfc` node in the
default (ai.onnx) domain, which has no such operator. onnxruntime.InferenceSession refuses it ("No Op
registered for Erfc with domain_version of 15"). Every TensorFlow >= 2.16 model with an exact GELU
(keras.activations.gelu too) fails the same way; approximate=True (tanh) converts and runs.

Expected: the model converts to standard ONNX (Erf-based: erfc(z) = 1 - erf(z), available since opset 9, or Gelu
at opset 20) and computes 0.5 * x * erfc(-x / sqrt(2)); else the converter fails with an error instead of
emitting a model no runtime accepts. Reference: float64 Python math.erfc, checked where the model runs.

Mechanism: tf2onnx/onnx_opset/math.py maps Erf but has no handler for the TensorFlow op Erfc, which
tf.nn.gelu(approximate=False) has emitted since TensorFlow changed its gelu to erfc; unsupported ops are kept
as-is in the ai.onnx domain.

Host: any.
"""
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx

ort.set_default_logger_severity(3)
print(f"tensorflow {tf.__version__}, tf2onnx {tf2onnx.__version__}, onnxruntime {ort.__version__}")
x = np.linspace(-3, 3, 20, dtype=np.float32).reshape(1, 4, 5)
xs = x.astype(np.float64).ravel()
ref = {False: np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in xs]).reshape(x.shape),
       True: np.array([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in xs]).reshape(x.shape)}
spec = [tf.TensorSpec(x.shape, tf.float32, name="x")]
refused = False
for approximate in (False, True):
    fn = tf.function(lambda t, a=approximate: tf.nn.gelu(t, approximate=a), input_signature=spec)
    try:
        model, _ = tf2onnx.convert.from_function(fn, input_signature=spec)
    except Exception as exc:  # noqa: BLE001 - a converter error would be the fix's behaviour, reported
        print(f"approximate={approximate}: tf2onnx raised {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
        continue
    ops = [(n.domain or "ai.onnx") + "::" + n.op_type for n in model.graph.node]
    print(f"approximate={approximate}: opset {model.opset_import[0].version}, nodes {ops}")
    try:
        y = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    except Exception as exc:  # noqa: BLE001 - the refusal of the converted model is the defect
        print(f"  ONNX Runtime refused the model: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        refused |= not approximate
        continue
    print(f"  ran: max |y - float64 gelu(approximate={approximate})| {np.abs(y - ref[approximate]).max():.1e}")

print("defect shown: the exact-GELU model converts to an Erfc node ONNX Runtime refuses" if refused else "not reproduced")
sys.exit(1 if refused else 0)
