"""XNNPACK (LiteRT default delegate) accepts a TRANSPOSE_CONV whose output_shape the input cannot
produce (output_padding 1 >= stride 1: declared width 10, input 7, k 3, stride 1 -> at most 9) and
returns a tensor of another shape than the model declares; the reference kernels refuse it.
ai-edge-litert 2.3.0, tensorflow-cpu 2.21.0."""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

w = tf.constant(np.random.RandomState(0).standard_normal((3, 3, 6, 4)).astype(np.float32))  # (kh, kw, O, I)
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 11, 10, 6], [1, 2, 1, 1], "VALID"))
spec = tf.TensorSpec([1, 5, 7, 4], tf.float32)
print("TF eager:", end=" ")
try:
    f(tf.zeros([1, 5, 7, 4]))
    print("ran")
except Exception as e:  # TF refuses the invalid shape
    print(type(e).__name__, str(e).strip().splitlines()[0][:120])
conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(spec)], f)
conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
model = conv.convert()
x = np.random.RandomState(1).standard_normal((1, 5, 7, 4)).astype(np.float32)
for rt in (OpResolverType.AUTO, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES, OpResolverType.BUILTIN_REF):
    it = Interpreter(model_content=model, experimental_op_resolver_type=rt)
    try:
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        out = it.get_output_details()[0]
        y = it.get_tensor(out["index"])
        print(f"{rt.name}: ran, declared output shape {list(out['shape'])}, got {list(y.shape)}")
    except Exception as e:
        print(f"{rt.name}: refused: {str(e).strip().splitlines()[0][:160]}")
