"""CPU float16/bfloat16 conv2d_transpose, Conv3D and the Conv2D gradients accumulate in the half type: results several ulps off

Kind: wrong-value
Ask: a fix: accumulate in float32 and round once, as the half-precision Conv2D forward kernel does.

What happens: On CPU, `tf.nn.conv2d_transpose` in float16 with explicit padding (3x3 kernel, 128 -> 8 channels, positive data) is up to 3.1 ulps from float64 (bfloat16: 3.2), where float32 rounded once, and `tf.nn.conv2d` in float16, are within 0.5 ulp. Float16 Conv3D: 6.4 ulps; filter gradient: 11.9.

Expected: float32 accumulation, as the Conv2D forward ("Use float32 accumulation for bfloat16 to deal with precision accumulation") and oneDNN do.

Mechanism: `tensorflow/core/kernels/conv_2d.h` casts to float for `Eigen::half` and `Eigen::bfloat16` forward only (lines 108, 200); `conv_grad_input_ops.h` (line 218), the filter gradient and `conv_3d.h` `CuboidConvolution<CPUDevice, T>` (line 47) contract in T.

Symptoms:
- conv2d_transpose and Conv2D gradients: explicit padding everywhere; SAME/VALID where oneDNN does not take the type.
- Conv3D, conv3d_transpose: float16 without AVX512_FP16 or oneDNN; bfloat16 without oneDNN. Keras layers alike.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.uniform(0.5, 1, (1, 8, 8, 128)).astype(np.float16)  # positive: no cancellation
w = rng.uniform(0.5, 1, (3, 3, 8, 128)).astype(np.float16)  # (kh, kw, out, in)
pads = [[0, 0], [1, 1], [1, 1], [0, 0]]  # explicit padding: TF's own kernel, oneDNN on or off
t2d = lambda dt: tf.cast(tf.nn.conv2d_transpose(tf.cast(x, dt), tf.cast(w, dt), (1, 8, 8, 8), 1, pads), tf.float64)
ref = t2d(tf.float64).numpy()  # float64: its rounding is far below a half-precision ulp
worst = []
for dt, bits in ((tf.float16, 11), (tf.bfloat16, 8)):
    ulp = 2.0 ** (np.floor(np.log2(ref)) - (bits - 1))
    err, once = np.abs(t2d(dt).numpy() - ref) / ulp, np.abs(tf.cast(tf.cast(t2d(tf.float32), dt), tf.float64) - ref) / ulp
    print(f"tensorflow {tf.__version__}, {dt.name}: max error {err.max():.2f} ulps; the float32 result rounded once: {np.max(once):.2f} ulps")
    worst.append(err.max())
sys.exit(1 if max(worst) > 1 else 0)
