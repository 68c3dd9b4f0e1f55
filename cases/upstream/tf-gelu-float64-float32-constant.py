"""tf.nn.gelu on float64 uses constants rounded to float32 (1/sqrt(2), and 0.044715 with approximate=True): errors near 1e-9 instead of 1e-16

Project: tensorflow/tensorflow (https://github.com/tensorflow/tensorflow/issues)
Upstream: none found
Related: none
Checked: 2026-11-28, tensorflow-cpu 2.21.0, keras 3.15.1, searched tensorflow/tensorflow issues for "tf.nn.gelu float64 precision", "gelu math_ops.cast constant float32", "gelu approximate 0.044715 float64"

What happens: tf.nn.gelu(x, approximate=False) on a float64 tensor (x on a grid over [-4, 4]) is up to 5.0e-9
away from the float64 value of 0.5 * x * erfc(-x / sqrt(2)), where float64 arithmetic gives about 1e-16; the
result equals the same formula evaluated with 1/sqrt(2) rounded to float32 (0.7071067690849304) to about
4e-16. tf.nn.gelu(x, approximate=True) is up to 9e-10 away from 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715
* x^3))) and matches it with 0.044715 rounded to float32. Eager, tf.function with jit_compile=True (XLA) and
keras.activations.gelu (which calls tf.nn.gelu) alike.

Expected: a float64 GELU computed with float64 constants, within a few ulps (about 1e-16 relative) of the
formula; float32 results are unaffected either way. Reference: Python's math.erfc / math.tanh in float64
(math.erfc is correctly rounded to within an ulp).

Mechanism: tensorflow/python/ops/nn_ops.py gelu(): the exact branch computes
0.5 * features * math_ops.erfc(-features * math_ops.cast(0.7071067811865476, features.dtype)) and the
approximate branch coeff = math_ops.cast(0.044715, features.dtype). math_ops.cast first converts the Python
float to a tensor of its default type, float32, then casts that to float64, so the constant is rounded to
float32. constant_op.constant(0.7071067811865476, dtype=features.dtype) (or multiplying by the Python float,
as the 0.7978845608028654 of the approximate branch already does) keeps float64.

Host: any.
"""
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"
import keras
import numpy as np
import tensorflow as tf

print(f"tensorflow {tf.__version__}, keras {keras.__version__}")
x = np.linspace(-4.0, 4.0, 8001)
c32 = float(np.float32(1 / math.sqrt(2)))
k32 = float(np.float32(0.044715))
exact = {False: np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x]),
         True: np.array([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in x])}
with_f32 = {False: np.array([0.5 * v * math.erfc(-v * c32) for v in x]),
            True: np.array([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + k32 * v**3))) for v in x])}
worst = 0.0
for approximate in (False, True):
    paths = [("tf.nn.gelu", lambda t, a=approximate: tf.nn.gelu(t, approximate=a)),
             ("tf.nn.gelu under XLA", tf.function(lambda t, a=approximate: tf.nn.gelu(t, approximate=a),
                                                  jit_compile=True)),
             ("keras.activations.gelu", lambda t, a=approximate: keras.activations.gelu(t, approximate=a))]
    for name, fn in paths:
        try:
            y = np.asarray(fn(tf.constant(x, tf.float64)))
        except Exception as exc:  # noqa: BLE001 - guard: a path this host cannot run is not the defect
            print(f"{name}(approximate={approximate}): raised {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            continue
        err = np.abs(y - exact[approximate])
        i = int(np.argmax(err))
        print(f"{name}(approximate={approximate}), float64: max |y - float64 formula| {err.max():.2e} at x = {x[i]:g} "
              f"(got {float(y[i])!r}, expected {float(exact[approximate][i])!r}); max |y - formula with the float32 constant| "
              f"{np.abs(y - with_f32[approximate]).max():.1e}; dtype {y.dtype}")
        worst = max(worst, float(err.max()))

if worst > 1e-12:
    print(f"defect shown: float64 gelu is {worst:.1e} off (float64 constants give ~1e-16)")
    sys.exit(1)
print(f"not reproduced: float64 gelu within {worst:.1e}")
sys.exit(0)
