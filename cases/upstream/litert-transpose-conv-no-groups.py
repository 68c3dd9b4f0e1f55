"""A grouped tf.nn.conv2d_transpose (filter (k, k, O/g, I), groups = 2) converts to a TRANSPOSE_CONV
that TFLite's kernels refuse at run time (TRANSPOSE_CONV has no groups; the converter does not say so).
TF's own (oneDNN) kernel runs it. tensorflow-cpu 2.21.0, ai-edge-litert 2.3.0."""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

w = tf.constant(np.random.RandomState(0).standard_normal((3, 3, 3, 4)).astype(np.float32))  # O/g = 3, I = 4, g = 2
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 7, 7, 6], 1, "VALID"))
spec = tf.TensorSpec([1, 5, 5, 4], tf.float32)
x = np.random.RandomState(1).standard_normal((1, 5, 5, 4)).astype(np.float32)
try:
    print("TF:", f(x).shape)
except Exception as e:
    print("TF refused:", str(e).strip().splitlines()[0][:120])
conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(spec)], f)
conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
model = conv.convert()
print("converted")
for rt in (OpResolverType.AUTO, OpResolverType.BUILTIN_REF):
    it = Interpreter(model_content=model, experimental_op_resolver_type=rt)
    try:
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        print(rt.name, "ran", it.get_tensor(it.get_output_details()[0]["index"]).shape)
    except Exception as e:
        print(rt.name, "refused:", str(e).strip().splitlines()[0][:160])
