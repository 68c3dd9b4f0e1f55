"""Full check: tf.nn.conv3d SAME with the stride exceeding the kernel by 2 or more, every single-axis shape

Measures, in this process's environment: the smallest case (H 3, kernel 1, stride 3) against XLA and conv2d; then
every single-axis geometry with kernel 1-3, stride 1-5, length 1-8 (D, H or W in float32, H in float64, float16
and bfloat16) against a float64 SAME reference: how many are wrong, whether they are exactly those with
pad_total <= -2, and whether each is the SAME result with a top padding of trunc(pad_total / 2). Exit 1 when
any dtype shows the shift, 0 otherwise.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port, _pywrap_utils

DTYPES = ("float32", "float64", "float16", "bfloat16")


def one_line(exc: BaseException) -> str:
    """The first line of a TensorFlow error, without its {{function_node ...}} prefix."""
    text = re.sub(r"\{\{[^}]*\}\}\s*", "", str(exc)).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:160] if text else ''}"


def same_1d(n: int, k: int, s: int, top: int) -> np.ndarray:
    """float64 SAME conv of x = 1..n with taps 4**t along one axis, padded `top` before (negative: starts late)."""
    out = -(-n // s)
    xs = np.arange(1, n + 1, dtype=np.float64)
    get = lambda i: xs[i] if 0 <= i < n else 0.0  # noqa: E731
    return np.array([sum(get(i * s + t - top) * 4.0**t for t in range(k)) for i in range(out)])


onednn = bool(_pywrap_util_port.IsMklEnabled())
print(f"tensorflow {tf.__version__}; oneDNN on: {onednn}; TF hands float16 / bfloat16 to oneDNN on this CPU: "
      f"{_pywrap_utils.IsDataTypeSupportedByOneDNNOnThisCPU(tf.float16)} / "
      f"{_pywrap_utils.IsDataTypeSupportedByOneDNNOnThisCPU(tf.bfloat16)} (float64 never)")

# 1. the smallest case: H 3, kernel 1, stride 3
x = tf.constant(np.arange(1, 4, dtype=np.float32).reshape(1, 1, 3, 1, 1))  # N, D, H, W, C
w = tf.ones((1, 1, 1, 1, 1), tf.float32)
shown = []
try:
    got = tf.nn.conv3d(x, w, [1, 1, 3, 1, 1], "SAME").numpy().ravel()
    xla = tf.function(lambda t: tf.nn.conv3d(t, w, [1, 1, 3, 1, 1], "SAME"), jit_compile=True)(x).numpy().ravel()
    print(f"float32 conv3d, H 3, kernel 1, stride 3, SAME: {got} (expected [1.]); XLA: {xla}; "
          f"conv2d with the same geometry: {tf.nn.conv2d(x[0], w[0], [1, 3, 1, 1], 'SAME').numpy().ravel()}")
except Exception as exc:  # noqa: BLE001 - guard: a refusal here is not this defect
    print(f"float32 conv3d raised {one_line(exc)}")

# 2. the sweep: every axis for float32, the H axis for the other dtypes
for dtype in DTYPES:
    axes = range(3) if dtype == "float32" else (1,)
    bad = total = off_rule = not_shift = 0
    for axis in axes:
        for k in range(1, 4):
            for s in range(1, 6):
                for n in range(1, 9):
                    out = -(-n // s)
                    pad_total = (out - 1) * s + k - n
                    shape, kernel, strides = [1, 1, 1], [1, 1, 1], [1, 1, 1]
                    shape[axis], kernel[axis], strides[axis] = n, k, s
                    xs = np.arange(1, n + 1, dtype=np.float32).reshape(1, *shape, 1)
                    ws = (4.0 ** np.arange(k, dtype=np.float32)).reshape(*kernel, 1, 1)  # exact in every dtype
                    try:
                        y = tf.nn.conv3d(tf.cast(xs, dtype), tf.cast(ws, dtype), [1, *strides, 1], "SAME")
                    except Exception as exc:  # noqa: BLE001 - e.g. oneDNN capped below what CPUID shows
                        print(f"{dtype}: conv3d raised {one_line(exc)}; skipped")
                        break
                    y = tf.cast(y, tf.float64).numpy().ravel()
                    wrong = not np.array_equal(y, same_1d(n, k, s, max(pad_total, 0) // 2))
                    total += 1
                    bad += wrong
                    off_rule += wrong != (pad_total <= -2)
                    not_shift += wrong and not np.array_equal(y, same_1d(n, k, s, int(pad_total / 2)))
                else:
                    continue
                break
            else:
                continue
            break
    if total:
        print(f"{dtype:8s}: {bad}/{total} single-axis shapes wrong; 'wrong exactly when pad_total <= -2' broken by "
              f"{off_rule}; wrong ones not explained by a top padding of trunc(pad_total / 2): {not_shift}")
    if bad:
        shown.append(dtype)

if shown:
    print(f"defect shown: SAME conv3d reads shifted windows in {', '.join(shown)}")
    sys.exit(1)
print("not shown on this host: oneDNN ran every dtype's Conv3D" if onednn else "not reproduced")
sys.exit(0)
