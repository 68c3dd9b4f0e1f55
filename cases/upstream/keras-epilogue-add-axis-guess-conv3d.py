"""keras.ops.add after a channels_first Conv3D or grouped Conv1D adds a (1, C, 1, ...) shift along the last axis when its length equals C (TensorFlow backend)

Project: keras-team/keras (https://github.com/keras-team/keras/issues)
Upstream: none found
Related: https://github.com/keras-team/keras/pull/20386 (the PR that rewrote add() as tf.nn.bias_add)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, keras 3.15.1, searched keras-team/keras and tensorflow/tensorflow issues for "keras.ops.add bias_add wrong axis", "Conv3D channels_first add", "ops.add broadcasting channels_first"

What happens: the output of keras.layers.Conv3D(3, 2, data_format="channels_first", use_bias=False) over
(1, 2, 3, 3, 4) is (1, 3, 2, 2, 3); keras.ops.add(y, shift.reshape(1, 3, 1, 1, 1)) adds the shift along the
last axis: 24 of 36 elements wrong, by up to 20 (shift [10, 20, 30], integer data, exact expected). After
a grouped keras.layers.Conv1D(6, 3, groups=2, data_format="channels_first", use_bias=False) over length 8
(output (1, 6, 6)), keras.ops.add(y, shift.reshape(1, 6, 1)): 30 of 36 wrong, by up to 50.
keras.ops.multiply with the same operand shapes is right.

Expected: NumPy broadcasting, as keras.ops.add documents and tf.add does: the (1, C, 1,
...) operand broadcasts along axis 1. Reference: float64 NumPy convolution plus shift[c] on channel c.

Mechanism: keras/src/backend/tensorflow/numpy.py add() (since keras PR #20386) squeezes the operand to a
vector and calls tf.nn.bias_add with data_format="NHWC" when x1.shape[-1] equals its length, "NCHW"
otherwise. These two layers run channels_first on every CPU: Keras' TensorFlow conv() compiles NCDHW and
grouped convolutions with XLA (keras/src/backend/tensorflow/nn.py conv(), needs_xla).

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


def reference(x: np.ndarray, k: np.ndarray, groups: int) -> np.ndarray:
    """VALID, stride 1, channels_first cross-correlation in float64; k in Keras layout (*kernel, C_in/g, C_out)."""
    rank = k.ndim - 2
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), k.shape[:rank], axis=tuple(range(2, 2 + rank)))
    cig, cog = k.shape[-2], k.shape[-1] // groups
    parts = []
    for g in range(groups):
        w = np.moveaxis(win[:, g * cig:(g + 1) * cig], 1, 1 + rank)                # N, *out, C_in/g, *kernel
        kg = np.moveaxis(k[..., g * cog:(g + 1) * cog].astype(np.float64), rank, 0)  # C_in/g, *kernel, C_out/g
        y = np.tensordot(w, kg, axes=(list(range(1 + rank, 2 + 2 * rank)), list(range(rank + 1))))
        parts.append(np.moveaxis(y, -1, 1))
    return np.concatenate(parts, axis=1)


rng = np.random.default_rng(0)
shown = False
for name, layer, x_shape, groups in [
    ("Conv3D(3, 2, channels_first)", keras.layers.Conv3D(3, 2, data_format="channels_first", use_bias=False),
     (1, 2, 3, 3, 4), 1),
    ("Conv1D(6, 3, groups=2, channels_first)",
     keras.layers.Conv1D(6, 3, groups=2, data_format="channels_first", use_bias=False), (1, 2, 8), 2),
]:
    x = rng.integers(-3, 4, x_shape).astype(np.float32)
    layer.build(x.shape)
    k = rng.integers(-2, 3, layer.kernel.shape).astype(np.float32)
    layer.set_weights([k])
    ref = reference(x, k, groups)
    operand_shape = (1, layer.filters) + (1,) * (len(x_shape) - 2)
    shift = (10 * np.arange(1, layer.filters + 1)).astype(np.float32).reshape(operand_shape)
    scale = np.arange(2, layer.filters + 2).astype(np.float32).reshape(operand_shape)
    try:
        y = layer(x)
    except Exception as exc:  # noqa: BLE001 - guard: a layer this host cannot run is not the defect
        print(f"{name}: did not run here ({type(exc).__name__}: {str(exc).strip().splitlines()[0][:150]})")
        continue
    if not np.array_equal(np.asarray(y), ref):
        print(f"{name}: the convolution itself differs from the reference (max |diff| {np.abs(np.asarray(y) - ref).max():g})")
        continue
    for op, got, want in [("add", keras.ops.add(y, shift), ref + shift),
                          ("multiply", keras.ops.multiply(y, scale), ref * scale)]:
        got = np.asarray(got)
        bad = got != want
        idx = np.unravel_index(np.argmax(np.abs(got - want)), got.shape)
        print(f"{name} -> keras.ops.{op}(y, {operand_shape}): output {got.shape}: {bad.sum()}/{bad.size} elements "
              f"wrong; worst at {tuple(int(i) for i in idx)}: got {got[idx]:g}, expected {want[idx]:g}")
        shown |= bool(bad.any()) and op == "add"

print("defect shown: the per-channel add went along the last axis" if shown else "not reproduced")
sys.exit(1 if shown else 0)
