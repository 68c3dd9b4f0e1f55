"""XNNPACK delegate accepts a VALID TRANSPOSE_CONV output_shape the input cannot produce and silently returns another shape

Kind: invalid-accepted
Ask: an error (or leaving the node to the built-in kernel, which refuses it) where the declared output size is not (input - 1) * stride + kernel + adjustment, 0 <= adjustment < stride.

What happens: A VALID TRANSPOSE_CONV (input width 5, kernel 3, stride 2: widths 11 or 12 possible) whose output_shape declares 13 runs under the XNNPACK delegate without an error and returns width 11. The width is full + (declared - kernel) % stride: stride 3, declared 18/19/20/21 give 15/16/17/15. The built-in kernels refuse it ("transpose_conv.cc:316 computed_input_width != SizeOfDimension(input, 2)").

Expected: the built-in kernel's check.

Mechanism: `tflite/delegates/xnnpack/xnnpack_delegate.cc` `CalculateTransposeConvPaddings` (line 1805 on main, f674577): the VALID branch only checks output >= kernel and sets adjustment = (output - kernel) % stride; the SAME branch checks the input size.
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter
w = np.ones((1, 3, 1, 1), np.float32)  # kernel width 3; input width 5, stride 2: full width 11 (11 or 12 producible)
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 1, 13, 1], [1, 1, 2, 1], "VALID"))  # declares width 13
model = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(tf.TensorSpec([1, 1, 5, 1]))], f).convert()
print("tensorflow", tf.__version__, "| ai-edge-litert", litert_version)
it = Interpreter(model_content=model)  # the default: XNNPACK delegate
try:
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ones((1, 1, 5, 1), np.float32))
    it.invoke()
except RuntimeError as exc:  # what the built-in kernels do with this model
    sys.exit(print("refused:", str(exc).splitlines()[0][:120]) or 0)
print("ran: output shape", list(it.get_tensor(it.get_output_details()[0]["index"]).shape), "where [1, 1, 13, 1] is declared")
sys.exit(1)
