"""TFLiteConverter folds a scalar add after a bias-less conv2d_transpose into a 1-element TRANSPOSE_CONV bias: NaN with XNNPACK

Kind: wrong-value
Ask: a fix: broadcast the constant to C_out elements when it becomes the TRANSPOSE_CONV's bias (and, in the XNNPACK delegate, check the bias size as the built-in kernel does).

What happens: `tf.nn.conv2d_transpose` (1 -> 2 channels, 3x3, no bias) followed by `+ 0.5` converts to a TRANSPOSE_CONV whose bias operand has shape [1]. With the XNNPACK delegate (the default) channel 1 is NaN (36 of 72 elements) and channel 0 is right (2e-7); the built-in kernels refuse the model at prepare: "transpose_conv.cc:391 NumElements(bias) != SizeOfDimension(weights, 0) (1 != 2)". One output channel, a conv bias (the scalar is then added to it), and CONV_2D with the same add are right.

Expected: the values TensorFlow computes for the same function (the bias of TRANSPOSE_CONV has one value per output channel).

Mechanism: the converter's add-into-bias fusion (`tensorflow/compiler/mlir/lite/transforms/optimize.cc`) takes the scalar constant as the bias operand when the TRANSPOSE_CONV has none, without broadcasting it (the exact pattern not located; the shape [1] read from the model); LiteRT's `tflite/delegates/xnnpack/xnnpack_delegate.cc` `VisitTransposeConvNode` (line 6838 on main, f674577) checks only that the bias is 1-D, not that it has C_out values, so XNNPACK reads past the tensor.
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
