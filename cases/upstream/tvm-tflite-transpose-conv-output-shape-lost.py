"""[Relax][Frontend][TFLite] TRANSPOSE_CONV with VALID padding ignores the output_shape tensor: the extra rows and columns are lost

Kind: wrong-value
Ask: a fix: with VALID padding, add the difference between output_shape and the full output as output_padding (or padding at the end), as the SAME branch already uses output_shape.

What happens: A tf.nn.conv2d_transpose(x 1x5x5x3, kernel 3x3, strides 2, "VALID", output_shape [1, 12, 12, 4]) converts to a TFLite TRANSPOSE_CONV with a 1x12x12x4 output; from_tflite imports it as R.nn.conv2d_transpose with padding 0 and no output_padding, returning 1x11x11x4, silently. A 1-D one fails at import instead ("Reshape expects the new shape to be convertible from the old shape"), as does any following node of the stated shape.

Expected: the output_shape tensor's shape, as TensorFlow and the TFLite interpreter give (https://www.tensorflow.org/api_docs/python/tf/nn/conv2d_transpose).

Mechanism: python/tvm/relax/frontend/tflite/tflite_frontend.py, convert_transpose_conv: for VALID, padding (0, 0, 0, 0) and output_shape used only for the channel check; convert_conv3d_transpose never reads it.
"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"  # quieter TensorFlow logs; no effect on the conversion
import sys
import numpy as np
import tensorflow as tf
import tflite
import tvm
from tvm.relax.frontend.tflite import from_tflite
print("tvm", tvm.__version__, "| tensorflow", tf.__version__)
w = tf.constant(np.ones((3, 3, 4, 3), np.float32))  # (kh, kw, out, in)
f = tf.function(lambda t: tf.nn.conv2d_transpose(t, w, [1, 12, 12, 4], 2, "VALID"), input_signature=[tf.TensorSpec((1, 5, 5, 3), tf.float32)], autograph=False)
expected = list(f(tf.ones((1, 5, 5, 3))).shape)
mod = from_tflite(tflite.Model.GetRootAsModel(tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f).convert(), 0))
print(mod.script(show_meta=False))  # the imported Relax module
imported = [int(v) for v in mod["main"].ret_ty.shape]
print("TensorFlow's output shape", expected, "| the imported module returns", imported)
sys.exit(0 if imported == expected else 1)
