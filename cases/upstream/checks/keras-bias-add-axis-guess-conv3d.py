"""Keras Conv3D and grouped Conv1D with data_format="channels_first" add the bias along the last axis when its length equals filters (TensorFlow backend)

Measures a channels_first Conv3D(3, 2) and a grouped Conv1D(6, 3, groups=2) with a bias, each with its last output
length equal to filters, against float64 NumPy (integer data); Keras compiles both with XLA, so they run
channels_first on every host. Exits 1 where either is wrong.
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
