"""keras.ops.add on the TensorFlow backend adds a (1, C, 1, 1) tensor along the last axis when that axis also has length C

Kind: wrong-value
Ask: a fix: use tf.nn.bias_add only when x2's values lie on the axis it adds along.

What happens: `keras.ops.add(x, b)` with x of shape (1, 3, 3, 3) and b of shape (1, 3, 1, 1) adds b along the last axis: 18 of 27 elements differ from NumPy broadcasting. Channels_first conv layers add their bias this way, so where the last output length equals `filters`, output and bias gradient are wrong.

Expected: NumPy broadcasting, as `tf.add` and Keras' other backends give.

Mechanism: `keras/src/backend/tensorflow/numpy.py` `add()` (since #20386) calls `tf.nn.bias_add(x1, squeeze(x2), "NHWC" if x1.shape[-1] == n else "NCHW")` when x2 has one axis longer than 1, of length n in {x1.shape[1], x1.shape[-1]}, whichever axis that is.

Symptoms:
- channels_first conv layers with a bias (Conv3D and grouped: every host; others: where oneDNN runs NCHW).
- `keras.ops.add(y, c.reshape(1, C, 1, ...))` after a channels_first conv.
"""
import os
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import keras
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__, "keras", keras.__version__, "backend", keras.backend.backend())
x = np.arange(27, dtype="float32").reshape(1, 3, 3, 3)  # (N, C, H, W) with W == C, as after a channels_first Conv2D
b = np.array([100, 200, 300], dtype="float32").reshape(1, 3, 1, 1)  # one value per channel (axis 1)
want = x + b  # NumPy broadcasting
got = keras.ops.convert_to_numpy(keras.ops.add(x, b))
print("expected x[0, :, 0, :] + b:", want[0, :, 0, :].tolist())
print("actual                    :", got[0, :, 0, :].tolist())
print(f"{int((got != want).sum())} of {got.size} elements differ from NumPy broadcasting")
sys.exit(1 if (got != want).any() else 0)
