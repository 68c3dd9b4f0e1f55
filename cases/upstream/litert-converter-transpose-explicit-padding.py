"""TFLiteConverter cannot lower tf.nn.conv2d_transpose with explicit padding pairs (Conv2DBackpropInput
padding='EXPLICIT') to TRANSPOSE_CONV; without TF Select the conversion fails. The same transposed
convolution with padding='VALID' and a crop converts. tensorflow-cpu 2.21.0."""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

w = tf.constant(np.random.RandomState(0).standard_normal((3, 3, 4, 4)).astype(np.float32))
spec = tf.TensorSpec([1, 5, 5, 4], tf.float32)
explicit = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 5, 5, 4], 1, [[0, 0], [1, 1], [1, 1], [0, 0]]))
cropped = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 7, 7, 4], 1, "VALID")[:, 1:-1, 1:-1, :])
for name, f in (("explicit pairs", explicit), ("VALID + crop", cropped)):
    conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(spec)], f)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    try:
        conv.convert()
        print(name, ": converted")
    except Exception as e:
        err = [ln for ln in str(e).splitlines() if "error:" in ln][0]
        print(name, ": refused:", err.split("error: ")[-1])
x = np.random.RandomState(1).standard_normal((1, 5, 5, 4)).astype(np.float32)
print("eager explicit == VALID+crop:", np.allclose(explicit(x), cropped(x), atol=1e-5))
