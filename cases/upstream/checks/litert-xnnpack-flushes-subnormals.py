"""XNNPACK's convolution flushes subnormal inputs and results to zero (LiteRT's default delegate); TFLite's reference kernels keep them

Measures: one float32 Conv2D converted by tf.lite.TFLiteConverter and run by ai_edge_litert's Interpreter with
its default XNNPACK delegate and with the reference kernels (BUILTIN_REF), on a subnormal input with normal
products (x = 2^-128, w = 16) and on normal inputs whose products and result are subnormal (x = w = 2^-65),
against the exact values. Exit 1 where XNNPACK gives zero (XNNPACK runs every operator with
PTHREADPOOL_FLAG_DISABLE_DENORMALS: src/operator-run.c, xnn_run_operator).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from ai_edge_litert import interpreter as litert


def tflite_conv(w: np.ndarray) -> bytes:
    """A TFLite model of one VALID conv2d with constant weights w (HWIO)."""
    @tf.function(input_signature=[tf.TensorSpec([1, 5, 5, 4], tf.float32)])
    def fn(x):
        return tf.nn.conv2d(x, tf.constant(w), 1, "VALID")

    return tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn).convert()


print("tensorflow", tf.__version__)
flushed = False
for what, ex, ew in (("subnormal input, normal result", -128, 4), ("normal inputs, subnormal result", -65, -65)):
    model = tflite_conv(np.full((3, 3, 4, 1), 2.0 ** ew, np.float32))
    x = np.full((1, 5, 5, 4), 2.0 ** ex, np.float32)
    want, got = 36 * 2.0 ** ex * 2.0 ** ew, {}
    for name, kw in (("XNNPACK", {}), ("reference", {"experimental_op_resolver_type": litert.OpResolverType.BUILTIN_REF})):
        it = litert.Interpreter(model_content=model, **kw)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        got[name] = float(it.get_tensor(it.get_output_details()[0]["index"])[0, 0, 0, 0])
    print(f"float32 {what}: XNNPACK {got['XNNPACK']!r}, reference kernels {got['reference']!r}, exact {want!r}")
    flushed |= got["XNNPACK"] == 0.0
sys.exit(1 if flushed else 0)
