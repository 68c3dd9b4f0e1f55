"""tf.function refuses a valid dilated tf.nn.conv3d ("Negative dimension size") because Conv3D shape inference swaps the H and W dilations

Measures a valid conv3d (input 3x3x2, kernel 2x2x1, dilations 1x1x3) eagerly (where the CPU kernel takes a dilation)
and traced in a tf.function. Exits 1 where the trace refuses it.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port


def one_line(exc: BaseException) -> str:
    """The line of a TensorFlow error that names the problem, without its {{function_node ...}} prefix."""
    lines = [ln.strip() for ln in re.sub(r"\{\{[^}]*\}\}\s*", "", str(exc)).splitlines() if ln.strip()]
    hit = next((ln for ln in lines if "Negative dimension" in ln), lines[0] if lines else "")
    return f"{type(exc).__name__}: {re.sub(r'^[A-Za-z]+Error: ', '', hit)[:170]}"


print(f"tensorflow {tf.__version__}; oneDNN on: {_pywrap_util_port.IsMklEnabled()}")
rng = np.random.default_rng(0)
w = tf.constant(rng.standard_normal((2, 2, 1, 2, 3)), tf.float32)   # kd, kh, kw, C_in, C_out
x_shape = (1, 3, 3, 2, 2)                                          # N, D, H, W, C
want = (1, 2, 2, 2, 3)


def conv(t: tf.Tensor) -> tf.Tensor:
    return tf.nn.conv3d(t, w, [1] * 5, "VALID", dilations=[1, 1, 1, 3, 1])


x = tf.constant(rng.standard_normal(x_shape), tf.float32)
try:
    print(f"eager: output {tuple(conv(x).shape)} (expected {want})")
except Exception as exc:  # noqa: BLE001 - CPU Conv3D without oneDNN refuses dilation > 1: not this defect
    print(f"eager: the kernel did not run here ({one_line(exc)})")
try:
    traced = tuple(tf.function(conv).get_concrete_function(tf.TensorSpec(x_shape, tf.float32)).output_shapes)
except Exception as exc:  # noqa: BLE001 - the refusal of a valid convolution is the defect
    print(f"tf.function trace: {one_line(exc)}")
    print("defect shown: the trace refuses a valid dilated conv3d")
    sys.exit(1)
print(f"tf.function trace: static shape {traced} (expected {want})")
print("defect shown: wrong static shape" if traced != want else "not reproduced")
sys.exit(1 if traced != want else 0)
