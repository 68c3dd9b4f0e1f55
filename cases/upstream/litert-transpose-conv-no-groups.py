"""TFLiteConverter turns a grouped conv2d_transpose into a TRANSPOSE_CONV that no LiteRT kernel can run

Kind: valid-refused
Ask: an error at conversion that names the limitation (TRANSPOSE_CONV has no groups), or one TRANSPOSE_CONV per group, instead of a model that fails at invoke.

What happens: `tf.nn.conv2d_transpose` with a filter of depth C_out / groups (4 -> 6 channels, 2 groups), which TensorFlow runs where oneDNN takes it, converts without a word to a TRANSPOSE_CONV with weights (3, 3, 3, 4) and output depth 6. XNNPACK and the reference kernels both refuse it at invoke: "transpose_conv.cc:906 SizeOfDimension(output, 3) != SizeOfDimension(weights, 0) (6 != 3)".

Expected: the converter refuses what the op cannot express (TransposeConvOptions carry no groups), or emits what runs. Group support itself: https://github.com/google-ai-edge/LiteRT/issues/105.

Mechanism: `tensorflow/compiler/mlir/lite/transforms/legalize_patterns.td` `LegalizeConv2DBackpropInput` rewrites any NHWC, undilated, SAME/VALID Conv2DBackpropInput to `TFL_TransposeConvOp` without comparing the filter's output depth with the output's channels.
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter

w = np.ones((3, 3, 3, 4), np.float32)  # (kh, kw, C_out / groups, C_in): 4 -> 6 channels in 2 groups
f = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 7, 7, 6], 1, "VALID"))
model = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(tf.TensorSpec([1, 5, 5, 4]))], f).convert()
print("tensorflow", tf.__version__, "| ai-edge-litert", litert_version, "| TFLiteConverter: converted,", len(model), "bytes")
it = Interpreter(model_content=model)
try:
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ones((1, 5, 5, 4), np.float32))
    it.invoke()
except RuntimeError as exc:  # the defect: the converted model cannot run
    sys.exit(print("LiteRT invoke:", str(exc).splitlines()[0]) or 1)
print("LiteRT ran it:", it.get_tensor(it.get_output_details()[0]["index"]).shape)
