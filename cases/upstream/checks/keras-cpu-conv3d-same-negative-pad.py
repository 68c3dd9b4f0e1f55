"""keras.layers.Conv3D(padding="same") on the TensorFlow backend reads shifted windows when the stride exceeds the kernel by 2 or more (TensorFlow's CPU Conv3D)

Measures Keras Conv3D(strides=(1, 3, 1), padding='same') over H = [1, 2, 3] (channels_last and channels_first), then
keras.ops.conv over 120 H-axis shapes (kernel 1-3, stride 1-5, length 1-8) in float32 and float64 against a NumPy SAME
reference: how many are wrong, whether exactly those with pad_total <= -2, and whether a top padding of
trunc(pad_total / 2) explains each. Exits 1 where a shape is wrong.
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
    """The first line of a TensorFlow/Keras error that says what failed, without prefixes or colour codes."""
    text = re.sub(r"\x1b\[[0-9;]*m|\{\{[^}]*\}\}\s*", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("Exception encountered")]
    return f"{type(exc).__name__}: {lines[0][:160] if lines else ''}"


def same_1d(n: int, k: int, s: int, top: int) -> np.ndarray:
    """float64 SAME conv of x = 1..n with taps 4**t along one axis, padded `top` before (negative: starts late)."""
    xs = np.arange(1, n + 1, dtype=np.float64)
    get = lambda i: xs[i] if 0 <= i < n else 0.0  # noqa: E731
    return np.array([sum(get(i * s + t - top) * 4.0**t for t in range(k)) for i in range(-(-n // s))])


onednn = bool(_pywrap_util_port.IsMklEnabled())
print(f"tensorflow {tf.__version__}, keras {keras.__version__}; oneDNN on: {onednn}")
shown = []

# 1. the layer, smallest case: H 3, kernel 1, stride 3
for fmt, shape in (("channels_last", (1, 1, 3, 1, 1)), ("channels_first", (1, 1, 1, 3, 1))):
    layer = keras.layers.Conv3D(1, 1, strides=(1, 3, 1), padding="same", use_bias=False, data_format=fmt)
    layer.build(shape)
    layer.set_weights([np.ones((1, 1, 1, 1, 1), np.float32)])
    try:
        y = np.asarray(layer(np.arange(1, 4, dtype=np.float32).reshape(shape))).ravel()
        print(f"Conv3D(1, 1, strides=(1, 3, 1), padding='same', data_format='{fmt}') over H = [1, 2, 3]: {y} (expected [1.])")
    except Exception as exc:  # noqa: BLE001 - guard: a refusal is not this defect
        print(f"Conv3D(data_format='{fmt}') raised {one_line(exc)}")

# 2. keras.ops.conv (what Conv3D.call runs) over the H-axis geometries, channels_last
for dtype in ("float32", "float64"):
    bad = off_rule = not_shift = 0
    for k in range(1, 4):
        for s in range(1, 6):
            for n in range(1, 9):
                pad_total = (-(-n // s) - 1) * s + k - n
                xs = np.arange(1, n + 1, dtype=dtype).reshape(1, 1, n, 1, 1)
                ws = (4.0 ** np.arange(k)).astype(dtype).reshape(1, k, 1, 1, 1)
                y = np.asarray(keras.ops.conv(xs, ws, strides=(1, s, 1), padding="same")).astype(np.float64).ravel()
                wrong = not np.array_equal(y, same_1d(n, k, s, max(pad_total, 0) // 2))
                bad += wrong
                off_rule += wrong != (pad_total <= -2)
                not_shift += wrong and not np.array_equal(y, same_1d(n, k, s, int(pad_total / 2)))
    print(f"keras.ops.conv {dtype}, channels_last: {bad}/120 H-axis shapes wrong; shapes where 'wrong' and "
          f"'pad_total <= -2' disagree: {off_rule}; wrong ones a top padding of trunc(pad_total / 2) does not explain: "
          f"{not_shift}")
    if bad:
        shown.append(dtype)

if shown:
    print(f"defect shown: SAME Conv3D reads shifted windows in {', '.join(shown)}")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
