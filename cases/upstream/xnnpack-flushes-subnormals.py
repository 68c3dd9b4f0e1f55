"""XNNPACK flushes subnormal float32 inputs and results to zero, undocumented: LiteRT's and ExecuTorch's default delegate differ from their reference kernels

Kind: by-design-undocumented
Ask: Documentation: state in XNNPACK's README (and LiteRT's and ExecuTorch's delegate docs) that operators run with subnormals flushed to zero, or offer a flag to keep them.

What happens: A float32 TFLite CONV_2D (3x3 kernel, 4 input channels) of x = 2^-128 with w = 16 gives 0.0 under LiteRT's default XNNPACK delegate; the reference kernels give the exact 36 * 2^-124 = 1.69e-36. With x = w = 2^-65 (normal inputs whose products 2^-130 are subnormal; exact sum 2.64e-38) XNNPACK also gives 0.0. ExecuTorch's XnnpackPartitioner gives the same zeros for a Conv2d, while its portable kernels keep both values.

Expected: IEEE 754 arithmetic as the reference kernels do it, or a documented statement that XNNPACK runs in flush-to-zero / denormals-are-zero mode; neither XNNPACK's README nor LiteRT's or ExecuTorch's delegate pages mention subnormals.

Mechanism: src/operator-run.c, xnn_run_operator, passes flags = PTHREADPOOL_FLAG_DISABLE_DENORMALS to every pthreadpool_parallelize_* call; pthreadpool's disable_fpu_denormals then sets flush-to-zero and denormals-are-zero (MXCSR on x86-64) around each task.

Symptoms:
LiteRT: the default interpreter (XNNPACK delegate) returns 0.0 where BUILTIN_REF returns 1.69e-36 and 2.64e-38.
ExecuTorch: a Conv2d lowered with XnnpackPartitioner returns 0.0 where the portable kernels keep both values.
"""
import sys

import numpy as np
import tensorflow as tf
from ai_edge_litert import interpreter as litert

print("tensorflow", tf.__version__)
fn = tf.function(lambda x: tf.nn.conv2d(x, tf.fill([3, 3, 4, 1], 16.0), 1, "VALID"),
                 input_signature=[tf.TensorSpec([1, 3, 3, 4], tf.float32)])
model = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn).convert()
x = np.full((1, 3, 3, 4), 2.0 ** -128, np.float32)  # subnormal; 36 products of 2^-124 each: 36 * 2^-124 = 1.69e-36
got = {}
for name, kind in (("XNNPACK (default)", litert.OpResolverType.AUTO), ("reference kernels", litert.OpResolverType.BUILTIN_REF)):
    it = litert.Interpreter(model_content=model, experimental_op_resolver_type=kind)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    got[name] = float(it.get_tensor(it.get_output_details()[0]["index"]).ravel()[0])
print("expected", 36 * 2.0 ** -124, "|", ", ".join(f"{k}: {v!r}" for k, v in got.items()))
sys.exit(1 if got["XNNPACK (default)"] == 0.0 else 0)
