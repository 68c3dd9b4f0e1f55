"""keras.ops.add on the TensorFlow backend adds a (1, C, 1, ...) operand along the last axis when that axis also has length C

Measures keras.ops.add of a (1, 3, 3) and a (1, 3, 1) tensor against NumPy broadcasting, then a channels_first
Conv2D(3, 3) with a bias whose output width equals filters (output and bias gradient against float64 NumPy, integer
data); where TensorFlow's CPU Conv2D refuses NCHW (oneDNN off) only the first. Exits 1 where either is wrong.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"
import keras
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port


def one_line(exc: BaseException) -> str:
    """The line of a TensorFlow/Keras error that says what was refused, without colour codes."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m|\{\{[^}]*\}\}", "", str(exc)).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: " + next((ln for ln in lines if "[Op:" in ln), lines[0] if lines else "")[:200]


print(f"tensorflow {tf.__version__}, keras {keras.__version__} (backend {keras.backend.backend()}), "
      f"oneDNN on: {_pywrap_util_port.IsMklEnabled()}")
shown = False

# 1. keras.ops.add alone: (1, 3, 3) + (1, 3, 1)
x1 = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
x2 = np.array([100, 200, 300], np.float32).reshape(1, 3, 1)
got = np.asarray(keras.ops.add(x1, x2))
want = x1.astype(np.float64) + x2.astype(np.float64)
bad = got != want
print(f"keras.ops.add((1,3,3), (1,3,1)): {bad.sum()}/{bad.size} elements wrong, max |diff| {np.abs(got - want).max():g}")
print("  expected", want[0].tolist(), "\n  got     ", got[0].tolist())
shown |= bool(bad.any())

# 2. Conv2D(3, 3, channels_first, bias): output (1, 3, 3, 3), last axis 3 == filters
rng = np.random.default_rng(0)
x = rng.integers(-3, 4, (1, 2, 5, 5)).astype(np.float32)         # N, C, H, W
k = rng.integers(-2, 3, (3, 3, 2, 3)).astype(np.float32)         # kh, kw, C_in, C_out (Keras layout)
b = np.array([10, 20, 30], np.float32)
layer = keras.layers.Conv2D(3, 3, data_format="channels_first", use_bias=True)
layer.build(x.shape)
layer.set_weights([k, b])
windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))  # N, C, 3, 3, kh, kw
ref = np.einsum("nchwij,ijco->nohw", windows, k.astype(np.float64)) + b.reshape(1, 3, 1, 1)
dy = np.arange(27, dtype=np.float32).reshape(1, 3, 3, 3)
try:
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        y = layer(xt)
        loss = tf.reduce_sum(y * dy)
    grad_b = tape.gradient(loss, layer.bias).numpy()
except Exception as exc:  # noqa: BLE001 - TF's own CPU Conv2D refuses NCHW without oneDNN
    print(f"Conv2D(channels_first) did not run on this host ({one_line(exc)}); keras.ops.add above shows the defect")
else:
    y = y.numpy()
    bad = y != ref
    idx = np.unravel_index(np.argmax(np.abs(y - ref)), y.shape)
    print(f"Conv2D(3, 3, channels_first, bias) output {y.shape}: {bad.sum()}/{bad.size} elements wrong; "
          f"worst at {tuple(int(i) for i in idx)}: got {y[idx]:g}, expected {ref[idx]:g}")
    want_gb = dy.astype(np.float64).sum(axis=(0, 2, 3))
    print(f"bias gradient for upstream gradient arange(27): got {grad_b.tolist()}, expected {want_gb.tolist()}")
    shown |= bool(bad.any()) or not np.array_equal(grad_b, want_gb)

print("defect shown: x + bias added along the wrong axis" if shown else "not reproduced")
sys.exit(1 if shown else 0)
