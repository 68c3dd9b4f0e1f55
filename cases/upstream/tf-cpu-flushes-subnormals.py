"""Adds to #127905: TensorFlow's CPU flush of subnormals also zeroes convolutions (float32, float64, bfloat16), eager, tf.function and XLA alike

Kind: by-design-undocumented
Ask: documentation: state in the tf.nn convolution pages (or a general numerics note) that CPU kernels run with flush-to-zero and denormals-are-zero, or a switch to turn it off.

What happens: On CPU, tf.nn.conv2d of x = 2**-128 (a subnormal float32) with w = 16 returns 0 instead of 2**-124 = 4.7e-38, a normal number, eagerly, in tf.function and with jit_compile=True; float64 with x = 2**-1024 alike (0 for 8.9e-308), and bfloat16 too. Normal inputs whose products are subnormal (x = w = 2**-65) also give 0. float16 keeps subnormals. Where #127905 finds XLA right for tf.math.sign, XLA flushes convolutions as well.

Expected: IEEE 754 arithmetic: 16 * 2**-128 = 2**-124, a normal float32, as NumPy and PyTorch give (https://www.tensorflow.org/api_docs/python/tf/nn/conv2d says nothing of subnormals).

Mechanism: the executor and the Eigen thread-pool wrapper run every CPU kernel under port::ScopedFlushDenormal (tensorflow/core/platform/denormal.h), which sets FTZ and DAZ: a subnormal input reads as 0 and a subnormal result is written as 0; float16 keeps them (converted to float32 around the convolution). TensorFlow's own denormal_test asserts the flush; #127905 shows it for tf.math.sign.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
zero = False
for dtype, tiny in ((np.float32, 2.0**-128), (np.float64, 2.0**-1024)):  # subnormal inputs (the smallest normals: 2**-126, 2**-1022)
    x, w = np.full((1, 1, 1, 1), tiny, dtype), np.full((1, 1, 1, 1), 16.0, dtype)
    conv = lambda a: tf.nn.conv2d(a, w, 1, "VALID")
    got = {"eager": conv(x), "tf.function": tf.function(conv)(x), "jit_compile": tf.function(conv, jit_compile=True)(x)}
    print(f"{np.dtype(dtype).name}: x = {tiny:.3g} (subnormal), w = 16: expected {16 * tiny:.3g} (normal);",
          ", ".join(f"{k} {float(v.numpy().item()):.3g}" for k, v in got.items()))
    zero = zero or any(float(v.numpy().item()) == 0 for v in got.values())
sys.exit(1 if zero else 0)
