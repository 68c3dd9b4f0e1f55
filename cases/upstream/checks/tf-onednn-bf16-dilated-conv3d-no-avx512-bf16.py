"""With oneDNN on, a dilated bfloat16 tf.nn.conv3d is refused on CPUs without AVX-512F: bfloat16 falls back to TensorFlow's own Conv3D, which takes no dilation

Measures a dilated bfloat16 tf.nn.conv3d (dilations [1, 1, 2, 2, 1], integer data) against float64, printing whether
oneDNN is on and whether TF hands bfloat16 to oneDNN on this CPU. Exits 1 where it is refused, 0 with a note where
oneDNN takes bfloat16.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port, _pywrap_utils


def one_line(exc: BaseException) -> str:
    """The first line of a TensorFlow error, without its {{function_node ...}} prefix."""
    text = re.sub(r"\{\{[^}]*\}\}\s*", "", str(exc)).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:160] if text else ''}"


onednn = bool(_pywrap_util_port.IsMklEnabled())
bf16_to_onednn = bool(_pywrap_utils.IsDataTypeSupportedByOneDNNOnThisCPU(tf.bfloat16))
print(f"tensorflow {tf.__version__}; oneDNN on: {onednn}; TF hands bfloat16 to oneDNN on this CPU: {bf16_to_onednn}")

rng = np.random.default_rng(0)
x = tf.cast(rng.integers(-3, 4, (1, 5, 7, 7, 2)).astype(np.float32), tf.bfloat16)   # N, D, H, W, C
w = tf.cast(rng.integers(-2, 3, (2, 3, 3, 2, 3)).astype(np.float32), tf.bfloat16)   # kd, kh, kw, C_in, C_out
x64, w64 = tf.cast(x, tf.float64).numpy(), tf.cast(w, tf.float64).numpy()
# float64 reference: VALID, dilation (1, 2, 2)
out = (4, 3, 3)
ref = np.zeros((1, *out, 3))
for a, b, c in np.ndindex(2, 3, 3):
    ref += np.einsum("ndhwc,co->ndhwo", x64[:, a:a + out[0], 2 * b:2 * b + out[1], 2 * c:2 * c + out[2]], w64[a, b, c])

try:
    y = tf.cast(tf.nn.conv3d(x, w, [1] * 5, "VALID", dilations=[1, 1, 2, 2, 1]), tf.float64).numpy()
except Exception as exc:  # noqa: BLE001 - the refusal is the defect, any other is reported below
    msg = one_line(exc)
    print(f"bfloat16 conv3d with dilations [1, 1, 2, 2, 1]: raised {msg}")
    if "only supports dilated rates of 1" in msg:
        try:
            f32 = tf.nn.conv3d(tf.cast(x, tf.float32), tf.cast(w, tf.float32), [1] * 5, "VALID", dilations=[1, 1, 2, 2, 1])
            print(f"the same call in float32: ran, max |diff| from float64 {np.abs(f32.numpy() - ref).max():g}")
        except Exception as exc32:  # noqa: BLE001 - reported, not the verdict
            print(f"the same call in float32: raised {one_line(exc32)}")
        print("defect shown: the dilated bfloat16 Conv3D is refused"
              + (" with oneDNN on" if onednn else " (oneDNN off: every dtype is, a known limitation)"))
        sys.exit(1)
    print("not shown on this host: another refusal (oneDNN capped below what CPUID shows?)")
    sys.exit(0)
print(f"bfloat16 conv3d with dilations [1, 1, 2, 2, 1]: ran, output {y.shape}, max |diff| from float64 "
      f"{np.abs(y - ref).max():g} (integer data; exact where every sum fits bfloat16)")
print("not shown on this host: TensorFlow gives bfloat16 to oneDNN here, which runs dilated Conv3D")
sys.exit(0)
