"""TFLiteConverter folds a scalar add after a bias-less conv2d_transpose into a 1-element TRANSPOSE_CONV bias: NaN with XNNPACK

Kind: wrong-value
Ask: a fix: broadcast the constant to C_out values when it becomes the TRANSPOSE_CONV's bias (and check the bias length in the XNNPACK delegate, as the built-in kernel does).

What happens: `tf.nn.conv2d_transpose` (1 -> 2 channels, no bias) followed by `+ 0.5` converts to a TRANSPOSE_CONV whose bias has shape [1]. With XNNPACK (the default) channel 1 is all NaN (36 of 72 elements), channel 0 right; the built-in kernels refuse it at prepare ("transpose_conv.cc:391 NumElements(bias) != SizeOfDimension(weights, 0) (1 != 2)").

Expected: the values TensorFlow computes for the same function.

Mechanism: the converter's add-into-bias fusion (`tensorflow/compiler/mlir/lite/transforms/optimize.cc`; the exact pattern not located) keeps the scalar as the bias; LiteRT's `xnnpack_delegate.cc` `VisitTransposeConvNode` (line 6838 on main) checks only that the bias is 1-D, so XNNPACK reads past it.
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter

w = np.random.default_rng(0).standard_normal((3, 3, 2, 1)).astype(np.float32)  # (kh, kw, C_out, C_in), no bias
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 6, 6, 2], 1, "VALID") + 0.5)
model = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(tf.TensorSpec([1, 4, 4, 1]))], f).convert()
x = np.random.default_rng(1).standard_normal((1, 4, 4, 1)).astype(np.float32)
it = Interpreter(model_content=model)  # the default: XNNPACK delegate
it.allocate_tensors()
it.set_tensor(it.get_input_details()[0]["index"], x)
it.invoke()
y, want = it.get_tensor(it.get_output_details()[0]["index"]), f(x).numpy()
print("tensorflow", tf.__version__, "| ai-edge-litert", litert_version)
print("TensorFlow y[0, 0, 0]:", want[0, 0, 0], "| LiteRT:", y[0, 0, 0], "| NaN per channel:", np.isnan(y).sum(axis=(0, 1, 2)).tolist())
sys.exit(0 if np.allclose(y, want, atol=1e-5) else 1)
