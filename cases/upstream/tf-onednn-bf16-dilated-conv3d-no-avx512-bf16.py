"""With oneDNN on, a dilated bfloat16 tf.nn.conv3d is refused on CPUs without AVX-512F: bfloat16 falls back to TensorFlow's own Conv3D, which takes no dilation

Project: tensorflow/tensorflow (https://github.com/tensorflow/tensorflow/issues)
Upstream: comment for https://github.com/tensorflow/tensorflow/issues/8431
Related: https://github.com/tensorflow/tensorflow/issues/28264 (CPU support for dilation rates larger than 1); https://github.com/tensorflow/tensorflow/issues/56153 (oneDNN bfloat16 on CPUs without native bf16)
Checked: 2026-11-28, tensorflow-cpu 2.21.0, searched tensorflow/tensorflow issues for "CPU implementation of Conv3D currently only supports dilated rates of 1", "conv3d dilation bfloat16 oneDNN", "oneDNN BFloat16 support only on platforms with AVX512"

What happens: tf.nn.conv3d(x, w, [1] * 5, "VALID", dilations=[1, 1, 2, 2, 1]) in bfloat16 raises
"CPU implementation of Conv3D currently only supports dilated rates of 1" wherever TensorFlow does not give
bfloat16 to oneDNN: with oneDNN forced on (TF_ENABLE_ONEDNN_OPTS=1) on an AVX2-only AMD EPYC (measured
2026-11-25, eager and in tf.function), as with oneDNN off (TF_ENABLE_ONEDNN_OPTS=0 on this host). The same
call in float32 runs and is right with oneDNN on there, and in bfloat16 on a CPU with AVX-512F (this host,
oneDNN on: exact on the integer data below).

Expected: the dilated convolution runs, as it does for float32 with oneDNN on and for bfloat16 where oneDNN
takes it; or, failing that, a fallback that supports what the oneDNN path supports.

Mechanism: with oneDNN on, TensorFlow hands bfloat16 ops to oneDNN only where
IsDataTypeSupportedByOneDNNOnThisCPU(bfloat16) holds (tensorflow/core/util/util.cc: AVX512F or AVX_NE_CONVERT);
elsewhere it falls back to its own Conv3D kernel (tensorflow/core/kernels/conv_ops_3d.cc), which refuses any
dilation above 1 on CPU. The fallback is silent until a dilated Conv3D runs.

Host: oneDNN on and IsDataTypeSupportedByOneDNNOnThisCPU(bfloat16) false (no AVX512F, no AVX_NE_CONVERT: e.g.
AVX2-only CPUs with TF_ENABLE_ONEDNN_OPTS=1). With oneDNN off every dtype is refused (a known limitation).
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
