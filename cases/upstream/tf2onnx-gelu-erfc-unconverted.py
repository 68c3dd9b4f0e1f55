"""tf2onnx converts tf.nn.gelu(approximate=False) to an `Erfc` node, which ai.onnx has not: ORT refuses the model."""
import onnxruntime as ort
import tensorflow as tf
import tf2onnx


@tf.function
def fn(x):
    return tf.nn.gelu(x, approximate=False)

model, _ = tf2onnx.convert.from_function(fn, input_signature=[tf.TensorSpec([1, 4, 5], tf.float32, name="x")])
print("tf", tf.__version__, "tf2onnx", tf2onnx.__version__, "opset", model.opset_import[0].version)
print("ops:", [n.op_type for n in model.graph.node])
try:
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
except Exception as exc:
    print(type(exc).__name__, str(exc).splitlines()[0][:220])
