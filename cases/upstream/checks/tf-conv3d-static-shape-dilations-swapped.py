"""Conv3D shape inference swaps the H and W dilations: the static shape of tf.nn.conv3d (what tf.function traces) is wrong when they differ

Measures the static shape a tf.function trace records for tf.nn.conv3d with dilations (1, 2, 3) in NDHWC and NCDHW,
against the VALID formula and (where the CPU kernel takes a dilation: oneDNN on) the eager and runtime shapes. Exits 1
where the traced shape is wrong.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port


def one_line(exc: BaseException) -> str:
    """The first line of a TensorFlow error, without its {{function_node ...}} prefix."""
    text = re.sub(r"\{\{[^}]*\}\}\s*", "", str(exc)).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:160] if text else ''}"


print(f"tensorflow {tf.__version__}; oneDNN on: {_pywrap_util_port.IsMklEnabled()}")
rng = np.random.default_rng(0)
w = tf.constant(rng.standard_normal((3, 3, 3, 3, 4)), tf.float32)   # kd, kh, kw, C_in, C_out
spatial, dil = (7, 8, 9), (1, 2, 3)                                # D, H, W and their dilations
right = tuple((n - 2 * d - 1) + 1 for n, d in zip(spatial, dil))   # VALID, kernel 3, stride 1
shown = False
for fmt in ("NDHWC", "NCDHW"):
    x_shape = (1, *spatial, 3) if fmt == "NDHWC" else (1, 3, *spatial)
    dilations = [1, *dil, 1] if fmt == "NDHWC" else [1, 1, *dil]
    want = (1, *right, 4) if fmt == "NDHWC" else (1, 4, *right)

    def conv(t: tf.Tensor, fmt: str = fmt, dilations: list = dilations) -> tf.Tensor:
        return tf.nn.conv3d(t, w, [1] * 5, "VALID", dilations=dilations, data_format=fmt)

    traced = tuple(tf.function(conv).get_concrete_function(tf.TensorSpec(x_shape, tf.float32)).output_shapes)
    print(f"{fmt}, input {x_shape}, dilations {dilations}: traced static shape {traced}, expected {want}")
    shown |= traced != want
    if fmt == "NDHWC":  # run it where the CPU kernel takes dilation (oneDNN), to show the runtime is right
        x = tf.constant(rng.standard_normal(x_shape), tf.float32)
        try:
            print(f"  eager {tuple(conv(x).shape)}, tf.function runtime {tuple(tf.function(conv)(x).shape)}")
        except Exception as exc:  # noqa: BLE001 - CPU Conv3D without oneDNN refuses dilation > 1: not this defect
            print(f"  the kernel did not run here ({one_line(exc)}); the traced shape above is the defect")

print("defect shown: the traced Conv3D shape swaps the H and W dilations" if shown else "not reproduced")
sys.exit(1 if shown else 0)
