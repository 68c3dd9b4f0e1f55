"""Full-integer quantization of a grouped tf.nn.conv2d_transpose with a bias (filter (k, k, O/g, I),
groups = 2): the converter's calibration runs the float model, whose TRANSPOSE_CONV TFLite refuses at
invoke (it has no groups), ignores that failure and quantizes with the ranges it never measured: the
output's scale is garbage, different in every process (1e19 to 1e35 in 8 runs). The converter then
either fails ("scale out of expressed type range") or writes a model that the interpreter refuses at
invoke in some processes and that aborts the whole process (SIGABRT, no message) in others, with the
default XNNPACK delegate and with the reference kernels alike. The converter should report the failed
calibration. tensorflow-cpu 2.21.0, ai-edge-litert 2.3.0."""
import os
import subprocess
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np

if len(sys.argv) == 1:  # each run in a child process: some abort
    for resolver in ["BUILTIN_REF", "AUTO"] * 4:
        rc = subprocess.run([sys.executable, __file__, resolver]).returncode
        print(f"{resolver}: exit status {rc}" + (" (killed by SIGABRT)" if rc in (-6, 134) else ""))
    sys.exit(0)

import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

rng = np.random.RandomState(0)
w = tf.constant(rng.standard_normal((3, 3, 4, 8)).astype(np.float32) * 0.1)  # O/g = 4, I = 8, g = 2
b = tf.constant(rng.standard_normal(8).astype(np.float32))
f = tf.function(lambda x: tf.nn.bias_add(tf.nn.conv2d_transpose(x, w, [1, 9, 9, 8], 1, "VALID"), b))
x = rng.uniform(-1, 1, (1, 7, 7, 8)).astype(np.float32)
conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function(tf.TensorSpec([1, 7, 7, 8]))], f)
conv.optimizations = [tf.lite.Optimize.DEFAULT]
conv.representative_dataset = lambda: iter([[x]])
conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
conv.inference_input_type = conv.inference_output_type = tf.int8
model = conv.convert()
it = Interpreter(model_content=model)
print("calibrated output scale:", it.get_output_details()[0]["quantization_parameters"]["scales"], flush=True)
it = Interpreter(model_content=model, experimental_op_resolver_type=getattr(OpResolverType, sys.argv[1]))
try:
    it.allocate_tensors()
    print(sys.argv[1], "allocated", flush=True)
    it.set_tensor(it.get_input_details()[0]["index"], np.zeros((1, 7, 7, 8), np.int8))
    it.invoke()
    print(sys.argv[1], "ran", it.get_tensor(it.get_output_details()[0]["index"]).shape)
except Exception as e:
    print(sys.argv[1], "refused:", str(e).strip().splitlines()[0][:160])
