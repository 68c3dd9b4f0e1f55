"""Keras Conv2DTranspose and Conv3DTranspose in float16 accumulate in float16 with oneDNN on, on CPUs without AVX512_FP16 (TensorFlow backend)

As checks/keras-cpu-half-accumulation.py with oneDNN on, on a CPU where TF does not hand float16 to oneDNN (no
AVX512_FP16). Exits 1 where a layer is more than 1 ulp off.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"
import keras
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port, _pywrap_utils

SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8}
DTYPE = "float16"


def one_line(exc: BaseException) -> str:
    """The first line of a TensorFlow/Keras error that says what failed, without prefixes or colour codes."""
    text = re.sub(r"\x1b\[[0-9;]*m|\{\{[^}]*\}\}\s*", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("Exception encountered")]
    return f"{type(exc).__name__}: {lines[0][:160] if lines else ''}"


def ulps_off(got: np.ndarray, ref: np.ndarray, dtype: str) -> np.ndarray:
    """|got - ref| in units in the last place of `dtype` at the reference's magnitude."""
    return np.abs(got - ref) / np.exp2(np.floor(np.log2(np.abs(ref))) - (SIGNIFICAND_BITS[dtype] - 1))


def conv_transpose_ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """float64 VALID stride-1 transposed convolution: x (N, *L, C_in), w (*k, C_out, C_in) (the Keras layout)."""
    rank = x.ndim - 2
    k = w.shape[:rank]
    out = np.zeros((x.shape[0], *[n + kk - 1 for n, kk in zip(x.shape[1:-1], k)], w.shape[-2]))
    for taps in np.ndindex(*k):
        sl = tuple(slice(t, t + n) for t, n in zip(taps, x.shape[1:-1]))
        out[(slice(None), *sl)] += np.einsum("...c,oc->...o", x, w[taps])
    return out


t = tf.as_dtype(DTYPE)
onednn = bool(_pywrap_util_port.IsMklEnabled())
onednn_takes = bool(_pywrap_utils.IsDataTypeSupportedByOneDNNOnThisCPU(t))
print(f"tensorflow {tf.__version__}, keras {keras.__version__}; oneDNN on: {onednn}; "
      f"TF hands {DTYPE} to oneDNN on this CPU: {onednn_takes}")

rng = np.random.default_rng(0)
worst, refused = 0.0, False
for name, layer_cls, x_shape in [("Conv2DTranspose", keras.layers.Conv2DTranspose, (1, 8, 8, 128)),
                                 ("Conv3DTranspose", keras.layers.Conv3DTranspose, (1, 4, 4, 4, 64))]:
    rank = len(x_shape) - 2
    x = tf.cast(rng.uniform(0.5, 1.0, x_shape).astype(np.float32), t).numpy()
    w = tf.cast(rng.uniform(0.5, 1.0, (*[3] * rank, 8, x_shape[-1])).astype(np.float32), t).numpy()
    ref = conv_transpose_ref(x.astype(np.float64), w.astype(np.float64))
    results = {}
    for dt in (DTYPE, "float32"):
        layer = layer_cls(8, 3, use_bias=False, dtype=dt)
        layer.build(x_shape)
        layer.set_weights([w.astype(dt)])
        try:
            results[dt] = tf.cast(tf.cast(layer(x.astype(dt)), t), tf.float64).numpy()
        except Exception as exc:  # noqa: BLE001 - e.g. oneDNN capped below what CPUID shows refuses half types
            print(f"{name}(dtype={dt}): raised {one_line(exc)}")
            refused = True
    if DTYPE not in results:
        continue
    u = ulps_off(results[DTYPE], ref, DTYPE)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(u), u.shape))
    f32 = (f"; the float32 layer rounded once: max {ulps_off(results['float32'], ref, DTYPE).max():.2f} ulps"
           if "float32" in results else "")
    print(f"{name}(dtype={DTYPE}): output {u.shape}, max {u.max():.2f} ulps at {idx} (got {results[DTYPE][idx]:.6g}, "
          f"float64 {ref[idx]:.6g}), {np.mean(u > 1):.0%} of elements more than 1 ulp off{f32}")
    worst = max(worst, float(u.max()))

if worst > 1:
    print(f"defect shown: {DTYPE} transposed-convolution layers are up to {worst:.2f} ulps off "
          "(float32 accumulation gives <= 0.5)")
    sys.exit(1)
why = (f"the kernels refused {DTYPE} (oneDNN capped below what CPUID shows?)" if refused else
       f"TensorFlow hands {DTYPE} to oneDNN here" if onednn and onednn_takes else "every layer within 1 ulp")
print(f"not shown on this host: {why} (max {worst:.2f} ulps)")
sys.exit(0)
