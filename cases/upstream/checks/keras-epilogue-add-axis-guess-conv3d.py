"""keras.ops.add after a channels_first Conv3D or grouped Conv1D adds a (1, C, 1, ...) shift along the last axis when its length equals C (TensorFlow backend)

Measures keras.ops.add and keras.ops.multiply of a per-channel (1, C, 1, ...) constant after a channels_first Conv3D
and a grouped Conv1D whose last output length equals C, against NumPy (integer data). Exits 1 where an add is wrong.
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
