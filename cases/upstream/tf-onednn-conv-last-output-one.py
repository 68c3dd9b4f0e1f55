"""tf.nn.conv2d is wrong on AVX-512 CPUs when the output width is 1 after a stride > 1 with batch >= 2 (oneDNN brg_conv_fwd:avx512_core)

Kind: wrong-value
Ask: a fix: keep such convolutions off oneDNN's brg_conv_fwd:avx512_core (or take a oneDNN with the fix; v3.13.2 still has it).

What happens: With oneDNN on (the default on AVX-512 CPUs), `tf.nn.conv2d` of a 2x4x3x1 NHWC input, 3x2 kernel, 2 output channels, strides (1, 3), VALID (output width 1) returns 4 of 8 outputs wrong by 20 on small integers, where float32 is exact (AMD EPYC Zen 4). Conv3D and Keras Conv2D alike. Batch 1, float64, TF_ENABLE_ONEDNN_OPTS=0 and ONEDNN_MAX_CPU_ISA=AVX2 are right.

Expected: the float64 result (https://www.tensorflow.org/api_docs/python/tf/nn/conv2d).

Mechanism: ONEDNN_VERBOSE names brg_conv_fwd:avx512_core (mb2_ic1oc2_ih4oh2kh3sh1_iw3ow1kw2sw3) in the bundled oneDNN v3.7.3; oneDNN's C API alone is wrong the same way in v3.6.2 and v3.13.2: `src/cpu/x64/jit_brgemm_conv_utils.cpp` keeps os blocking for ow == 1 on the failing path.

Symptoms:
NHWC float32 and bfloat16 Conv2D/Conv3D (tf.nn, tf.function, Keras) with a last output of 1 after a stride > 1, batch >= 2; a one-channel NCHW input is reordered into the same kernel.
On AMX CPUs, bfloat16 NHWC convs with more than one channel per group meet AMX's own brgemm kernel (brg_conv_fwd:avx10_1_512_amx) on the same shapes: NaN or wrong values.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # the default on AVX-512 CPUs
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
rng = np.random.default_rng(0)
x = rng.integers(-3, 4, (2, 4, 3, 1)).astype(np.float32)  # N, H, W, C: batch 2
w = rng.integers(-2, 3, (3, 2, 1, 2)).astype(np.float32)  # kh, kw, C_in, C_out
got = tf.nn.conv2d(x, w, [1, 1, 3, 1], "VALID").numpy()  # output width (3 - 2) // 3 + 1 = 1
want = tf.nn.conv2d(x.astype(np.float64), w.astype(np.float64), [1, 1, 3, 1], "VALID").numpy()
print("float64 (exact):", want.ravel().tolist())
print("float32:        ", got.ravel().tolist())
print(f"{int((got != want).sum())} of {got.size} outputs wrong")
sys.exit(1 if (got != want).any() else 0)
