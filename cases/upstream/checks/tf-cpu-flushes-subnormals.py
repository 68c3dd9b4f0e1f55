"""TensorFlow's CPU convolution flushes subnormal inputs and results to zero (float32 and float64)

Measures: tf.nn.conv2d on a subnormal input with normal products (x = 2^-128, w = 16), and on normal inputs
whose products and result are subnormal (x = w = 2^-65), in float32 and float64 (2^-1024, 2^-513), against the
exact values. Exit 1 where either comes back as zero (TensorFlow runs its kernels with FTZ and DAZ set).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
flushed = False
for dtype, (e_in, e_prod) in ((np.float32, (-128, -65)), (np.float64, (-1024, -513))):
    for what, ex, ew in (("subnormal input, normal result", e_in, 4), ("normal inputs, subnormal result", e_prod, e_prod)):
        x = np.full((1, 5, 5, 4), 2.0 ** ex, dtype)  # NHWC
        w = np.full((3, 3, 4, 1), 2.0 ** ew, dtype)  # HWIO
        got = float(tf.nn.conv2d(x, w, strides=1, padding="VALID").numpy()[0, 0, 0, 0])
        want = 36 * 2.0 ** ex * 2.0 ** ew
        print(f"{np.dtype(dtype).name} {what}: {got!r}, exact {want!r}")
        flushed |= got == 0.0 and want != 0.0
sys.exit(1 if flushed else 0)
