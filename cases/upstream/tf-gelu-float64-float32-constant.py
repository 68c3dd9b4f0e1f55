"""tf.nn.gelu(approximate=False) on float64 uses 1/sqrt(2) rounded to float32: math_ops.cast(0.7071067811865476,
float64) converts the Python float to a float32 tensor first. Errors of 5e-9 where float64 gives 1e-16."""
import math

import numpy as np
import tensorflow as tf

x = np.linspace(-4, 4, 8001)
exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x])
c32 = float(np.float32(1 / math.sqrt(2)))
with_f32_constant = np.array([0.5 * v * math.erfc(-v * c32) for v in x])
for name, fn in [("tf.nn.gelu", lambda t: tf.nn.gelu(t, approximate=False)),
                 ("keras gelu", lambda t: tf.keras.activations.gelu(t, approximate=False)),
                 ("tf.nn.gelu jit", tf.function(lambda t: tf.nn.gelu(t, approximate=False), jit_compile=True))]:
    y = fn(tf.constant(x, tf.float64)).numpy()
    print(f"tf {tf.__version__} {name}: max|y - exact| = {np.max(np.abs(y - exact)):.3g}, "
          f"max|y - with float32 1/sqrt(2)| = {np.max(np.abs(y - with_f32_constant)):.3g}")
