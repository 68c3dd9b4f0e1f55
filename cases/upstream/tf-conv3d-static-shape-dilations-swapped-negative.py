"""tf.function refuses a valid dilated tf.nn.conv3d ("Negative dimension size") because Conv3D shape inference swaps the H and W dilations

Project: tensorflow/tensorflow (https://github.com/tensorflow/tensorflow/issues)
Upstream: none found
Related: https://github.com/tensorflow/tensorflow/issues/113318 (conv1d NCW dilation: tf.function fails, eager works; another shape path); https://github.com/tensorflow/tensorflow/issues/113319 (the reverse: a dilated filter larger than the input)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, searched tensorflow/tensorflow issues for "Conv3DShape dilation_rows dilation_cols swapped", "conv3d dilations tf.function Negative dimension size eager works", "conv3d shape inference dilations"

What happens: tf.nn.conv3d over a (1, 3, 3, 2, 2) NDHWC input with a (2, 2, 1) kernel, VALID, dilations
[1, 1, 1, 3, 1] (H 1, W 3; the W kernel is 1 long, so the W dilation changes nothing) is a valid convolution
with output (1, 2, 2, 2, 3). Traced by tf.function (or tf.autograph, tf2onnx, the TFLite converter, XLA) it
fails before anything runs: "Negative dimension size caused by subtracting 4 from 3": shape inference
applied the W dilation 3 to the H kernel (extent 1 + (2 - 1) * 3 = 4 > 3). Eager execution runs it and returns
(1, 2, 2, 2, 3) where the CPU kernel accepts dilation (oneDNN on).

Expected: each axis uses its own dilation, as the tf.nn.conv3d documentation states ("[1, d_depth, d_height,
d_width, 1]") and the kernels compute: output (1, 2, 2, 2, 3), the same traced as eager.

Mechanism: tensorflow/core/framework/common_shape_fns.cc Conv3DShape reads dilation_cols = dilations[2];
dilation_rows = dilations[3] for NDHWC (dilations[3] / dilations[4] for NCDHW): H and W swapped. Where the
swapped extent still fits, the trace succeeds with a wrong static shape (the companion report
tf-conv3d-static-shape-dilations-swapped); here it does not fit, so every graph-mode path refuses the model.

Host: any (the failure is in shape inference; no kernel runs). Without oneDNN the CPU Conv3D kernel also
refuses dilation above 1 at run time, a separate known limitation, so eager is shown only where it runs.
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
