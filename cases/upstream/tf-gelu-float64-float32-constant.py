"""tf.nn.gelu on float64 uses 1/sqrt(2) (and 0.044715) rounded to float32: errors near 1e-9 instead of 1e-16

Kind: wrong-value
Ask: a fix: build the constants in the input's dtype (constant_op.constant(c, dtype=...)) instead of casting a float32 tensor.

What happens: `tf.nn.gelu(x, approximate=False)` on float64 x in [-4, 4] is up to 5.0e-9 from 0.5 * x * erfc(-x / sqrt(2)) computed in float64, and equals that formula with 1/sqrt(2) rounded to float32 (0.7071067690849304) to 4e-16. `approximate=True` is up to 9e-10 off, matching 0.044715 rounded to float32.

Expected: a float64 GELU within a few float64 ulps of its formula (https://www.tensorflow.org/api_docs/python/tf/nn/gelu), as `tf.math.erfc` itself is.

Mechanism: `tensorflow/python/ops/nn_ops.py` `gelu()` computes `math_ops.erfc(-features * math_ops.cast(0.7071067811865476, features.dtype))` and `coeff = math_ops.cast(0.044715, features.dtype)`: `cast` first makes the Python float a float32 tensor, then casts it to float64, so the constant is rounded to float32.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
x = tf.constant(np.linspace(-4, 4, 801), tf.float64)
formula = lambda c: 0.5 * x * tf.math.erfc(-x * tf.constant(c, tf.float64))  # 0.5 x erfc(-c x), c = 1/sqrt(2)
got = tf.nn.gelu(x, approximate=False)
err64 = tf.reduce_max(tf.abs(got - formula(0.7071067811865476))).numpy()
err32 = tf.reduce_max(tf.abs(got - formula(float(np.float32(0.7071067811865476))))).numpy()
print(f"max |gelu - formula with float64 1/sqrt(2)|: {err64:.1e}; with 1/sqrt(2) rounded to float32: {err32:.1e}")
sys.exit(1 if err64 > 1e-12 else 0)
