"""keras.ops.add(conv_output, shift.reshape(1, C, 1, 1)) adds the per-channel shift along the last axis when its length equals C (TensorFlow backend)

Measures keras.ops.add and keras.ops.multiply of a channels_first Conv2D output (1, 3, 3, 3) and a (1, 3, 1, 1) per-
channel constant against NumPy (integer data); where the NCHW conv does not run (oneDNN off) the NumPy conv output is
used. Exits 1 where the add is wrong.
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

rng = np.random.default_rng(0)
x = rng.integers(-3, 4, (1, 2, 5, 5)).astype(np.float32)   # N, C, H, W
k = rng.integers(-2, 3, (3, 3, 2, 3)).astype(np.float32)   # kh, kw, C_in, C_out (Keras layout)
shift = np.array([10, 20, 30], np.float32).reshape(1, 3, 1, 1)
scale = np.array([2, 3, 4], np.float32).reshape(1, 3, 1, 1)
windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))
conv_ref = np.einsum("nchwij,ijco->nohw", windows, k.astype(np.float64))   # (1, 3, 3, 3)

layer = keras.layers.Conv2D(3, 3, data_format="channels_first", use_bias=False)
layer.build(x.shape)
layer.set_weights([k])
try:
    y = layer(x)
    assert np.array_equal(np.asarray(y), conv_ref), "the convolution itself differs"
    source = "Conv2D(channels_first) output"
except Exception as exc:  # noqa: BLE001 - TF's own CPU Conv2D refuses NCHW without oneDNN
    print(f"Conv2D(channels_first) did not run on this host ({one_line(exc)}); using the NumPy conv output")
    y = tf.constant(conv_ref.astype(np.float32))
    source = "the NumPy conv output"

shown = False
for name, got, want in [("keras.ops.add(y, shift.reshape(1, 3, 1, 1))", keras.ops.add(y, shift), conv_ref + shift),
                        ("keras.ops.multiply(y, scale.reshape(1, 3, 1, 1))", keras.ops.multiply(y, scale),
                         conv_ref * scale)]:
    got = np.asarray(got)
    bad = got != want
    idx = np.unravel_index(np.argmax(np.abs(got - want)), got.shape)
    print(f"{name} on {source} {tuple(y.shape)}: {bad.sum()}/{bad.size} elements wrong; "
          f"worst at {tuple(int(i) for i in idx)}: got {got[idx]:g}, expected {want[idx]:g}")
    shown |= bool(bad.any()) and "add" in name

print("defect shown: the per-channel add went along the last axis" if shown else "not reproduced")
sys.exit(1 if shown else 0)
