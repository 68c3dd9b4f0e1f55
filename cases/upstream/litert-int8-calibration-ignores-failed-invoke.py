"""TFLiteConverter's int8 calibration ignores a failed invoke of the float model and quantizes with garbage ranges; the model then aborts

Kind: crash
Ask: a fix: stop the conversion with the invoke error when the calibrator cannot run the float model, instead of quantizing with ranges it never measured.

What happens: Full-integer quantization of a grouped `tf.nn.conv2d_transpose` with a bias converts without an error, though the float TRANSPOSE_CONV the calibrator runs fails at every invoke ("SizeOfDimension(output, 3) != SizeOfDimension(weights, 0)"). The int8 output scale is garbage, different in every process (2.8e29 to 6.7e35 in five runs; the data give about 0.018), and invoking the model aborts the process (SIGABRT, no message) in most runs.

Expected: a conversion error naming the failed invoke, as for other invoke failures (https://github.com/tensorflow/tensorflow/issues/44114).

Mechanism: not located: `calibrator.py` `_feed_tensors` -> `CalibrationWrapper::FeedTensor` checks the invoke status, yet nothing is raised here, so the quantizer writes parameters from statistics never collected. TRANSPOSE_CONV has no groups (reported separately).
"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter
w = (np.random.default_rng(0).standard_normal((3, 3, 4, 8)) * 0.1).astype(np.float32)  # (kh, kw, C_out/groups, C_in): 2 groups
x = np.random.default_rng(1).uniform(-1, 1, (1, 7, 7, 8)).astype(np.float32)  # |output| < 10: a fitting int8 scale is < 0.1
f = tf.function(lambda t: tf.nn.conv2d_transpose(t, w, [1, 9, 9, 8], 1, "VALID") + np.linspace(-1, 1, 8, dtype=np.float32))
conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(tf.TensorSpec([1, 7, 7, 8]))], f)
conv.optimizations, conv.representative_dataset = [tf.lite.Optimize.DEFAULT], lambda: iter([[x]])
conv.target_spec.supported_ops, conv.inference_input_type, conv.inference_output_type = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8], tf.int8, tf.int8
it = Interpreter(model_content=conv.convert())
print("tensorflow", tf.__version__, "| ai-edge-litert", litert_version, "| int8 output scale:", scale := it.get_output_details()[0]["quantization_parameters"]["scales"][0], flush=True)
it.allocate_tensors()
try:
    it.invoke()  # with a garbage scale: SIGABRT in some processes
except RuntimeError as exc:  # refused in others
    print("invoke:", str(exc).splitlines()[0][:110])
raise SystemExit(0 if scale < 0.1 else 1)
