"""tf2onnx leaves tf.nn.gelu's Erfc in the ai.onnx domain: ONNX Runtime refuses every converted model with an exact GELU

Measures tf2onnx's conversion of tf.nn.gelu with approximate=False and True (opset 15): the ONNX nodes emitted,
whether ONNX Runtime loads the model, and the approximate model's error against the float64 tanh formula. Exits 1
where the exact-GELU model is refused.
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
