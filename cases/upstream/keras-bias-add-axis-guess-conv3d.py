"""Keras Conv3D and grouped Conv1D with data_format="channels_first" add the bias along the last axis when its length equals filters (TensorFlow backend)

Project: keras-team/keras (https://github.com/keras-team/keras/issues)
Upstream: none found
Related: https://github.com/keras-team/keras/pull/20386 (the PR that rewrote add() as tf.nn.bias_add)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, keras 3.15.1, searched keras-team/keras and tensorflow/tensorflow issues for "Conv3D channels_first bias", "keras.ops.add bias_add wrong axis", "grouped Conv1D channels_first bias"

What happens: keras.layers.Conv3D(3, 2, data_format="channels_first", use_bias=True) over a (1, 2, 3, 3, 4)
input returns a (1, 3, 2, 2, 3) output whose last axis has length 3 == filters: the bias is added along
that last axis instead of the channel axis, 8 of 12 elements per channel wrong (24 of 36), off by up to 20
(bias [10, 20, 30], integer data, exact expected). A grouped keras.layers.Conv1D(6, 3, groups=2,
data_format="channels_first") over length 8 (output length 6 == filters): 30 of 36 elements wrong, by up
to 50. The same layers are exact when the last output length differs from filters, or with use_bias=False.

Expected: the bias of a channels_first convolution is added per output channel (axis 1), as the Keras
documentation of Conv3D/Conv1D says (and as the same layers do with data_format="channels_last"). Reference: float64 NumPy
convolution plus bias[c] on channel c.

Mechanism: the layer adds its bias with keras.ops.add(outputs, ops.reshape(bias, (1, filters, 1, ...)))
(keras/src/layers/convolutional/base_conv.py call()). On the TensorFlow backend, keras.ops.add
(keras/src/backend/tensorflow/numpy.py add(), since keras PR #20386) squeezes the (1, C, 1, ...) operand to
a vector and calls tf.nn.bias_add with data_format="NHWC" when x1.shape[-1] equals its length, else
"NCHW": the last-axis test comes first, so a channels_first output whose last axis has length C gets the
bias along that axis. Keras' TensorFlow conv() compiles NCDHW and grouped convolutions with XLA
(keras/src/backend/tensorflow/nn.py conv(), needs_xla), so these layers run channels_first on every CPU.

Host: any (oneDNN on or off).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"
import keras
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port

print(f"tensorflow {tf.__version__}, keras {keras.__version__} (backend {keras.backend.backend()}), "
      f"oneDNN on: {_pywrap_util_port.IsMklEnabled()}")


def reference(x: np.ndarray, k: np.ndarray, b: np.ndarray, groups: int) -> np.ndarray:
    """VALID, stride 1, channels_first cross-correlation in float64; k in Keras layout (*kernel, C_in/g, C_out)."""
    rank = k.ndim - 2
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), k.shape[:rank], axis=tuple(range(2, 2 + rank)))
    cig, cog = k.shape[-2], k.shape[-1] // groups
    parts = []
    for g in range(groups):
        w = win[:, g * cig:(g + 1) * cig]                    # N, C_in/g, *out, *kernel
        kg = k[..., g * cog:(g + 1) * cog].astype(np.float64)  # *kernel, C_in/g, C_out/g
        w = np.moveaxis(w, 1, 1 + rank)                      # N, *out, C_in/g, *kernel
        kg = np.moveaxis(kg, rank, 0)                        # C_in/g, *kernel, C_out/g
        y = np.tensordot(w, kg, axes=(list(range(1 + rank, 2 + 2 * rank)), list(range(rank + 1))))
        parts.append(np.moveaxis(y, -1, 1))
    return np.concatenate(parts, axis=1) + b.reshape(1, -1, *([1] * rank))


rng = np.random.default_rng(0)
shown = False
for name, layer, x_shape, groups in [
    ("Conv3D(3, 2, channels_first)", keras.layers.Conv3D(3, 2, data_format="channels_first"), (1, 2, 3, 3, 4), 1),
    ("Conv1D(6, 3, groups=2, channels_first)", keras.layers.Conv1D(6, 3, groups=2, data_format="channels_first"),
     (1, 2, 8), 2),
]:
    x = rng.integers(-3, 4, x_shape).astype(np.float32)
    layer.build(x.shape)
    k = rng.integers(-2, 3, layer.kernel.shape).astype(np.float32)
    b = (10 * np.arange(1, layer.filters + 1)).astype(np.float32)
    layer.set_weights([k, b])
    ref = reference(x, k, b, groups)
    try:
        y = np.asarray(layer(x))
    except Exception as exc:  # noqa: BLE001 - guard: a layer this host cannot run is not the defect
        print(f"{name}: did not run here ({type(exc).__name__}: {str(exc).strip().splitlines()[0][:150]})")
        continue
    bad = y != ref
    idx = np.unravel_index(np.argmax(np.abs(y - ref)), y.shape)
    print(f"{name}: output {y.shape}, last axis {y.shape[-1]} == filters {layer.filters}: {bad.sum()}/{bad.size} "
          f"elements wrong; worst at {tuple(int(i) for i in idx)}: got {y[idx]:g}, expected {ref[idx]:g}")
    shown |= bool(bad.any())

print("defect shown: the bias is added along the last axis" if shown else "not reproduced")
sys.exit(1 if shown else 0)
