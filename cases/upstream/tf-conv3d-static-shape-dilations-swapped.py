"""Conv3D shape inference swaps the H and W dilations: the static shape of tf.nn.conv3d (what tf.function traces) is wrong when they differ

Project: tensorflow/tensorflow (https://github.com/tensorflow/tensorflow/issues)
Upstream: none found
Related: https://github.com/tensorflow/tensorflow/issues/113318 (conv1d NCW dilation: tf.function fails, eager works; another shape path)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, searched tensorflow/tensorflow issues for "Conv3DShape dilation_rows dilation_cols swapped", "conv3d dilations tf.function wrong static shape", "Negative dimension size conv3d dilation eager works"

What happens: for tf.nn.conv3d over a (1, 7, 8, 9, 3) NDHWC input with a 3x3x3 kernel, VALID, dilations
[1, 1, 2, 3, 1] (H 2, W 3), the shape a tf.function trace records (no kernel runs) is (1, 5, 2, 5, 4),
while the convolution's output is (1, 5, 4, 3, 4) (D 7 - 2 = 5, H 8 - 2 * 2 = 4, W 9 - 2 * 3 = 3): the
H extent was computed with the W dilation and the W extent with the H dilation. The same for NCDHW
((1, 4, 5, 2, 5) traced, (1, 4, 5, 4, 3) right). Eager execution and tf.function's runtime return the right
shape (where the CPU kernel accepts dilation: with oneDNN on). Consumers of the static shape go
wrong: the TFLite converter's MLIR shape inference gets the right shape and refuses the graph ("'tf.Conv3D' op
inferred type(s) ... are incompatible with return type(s)"), tf2onnx bakes the traced shape into Reshape
nodes, and where the swapped extent would be below 1 the trace itself fails ("Negative dimension size").

Expected: output extent per spatial axis (in - (kernel - 1) * dilation - 1) // stride + 1 with each axis' own
dilation (the tf.nn.conv3d documentation: dilations "[1, d_depth, d_height, d_width, 1]"), as the kernels compute.

Mechanism: tensorflow/core/framework/common_shape_fns.cc Conv3DShape reads, for NDHWC,
dilation_cols = dilations[2]; dilation_rows = dilations[3] (and dilations[3] / dilations[4] for NCDHW): rows
(H) and cols (W) are swapped; the strides beside them are read in the right order.

Host: any (the static shape is computed without running a kernel). Without oneDNN, TensorFlow's CPU Conv3D
refuses any dilation above 1 at run time (a separate, known limitation), so only the traced shape is shown there.
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
