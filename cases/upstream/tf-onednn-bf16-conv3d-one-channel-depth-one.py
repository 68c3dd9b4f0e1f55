"""bfloat16 conv3d with one input channel is wrong on CPU with oneDNN when the input depth is 1 and padded

Kind: wrong-value
Ask: a fix: keep these convolutions off oneDNN's brg_conv_fwd:avx512_core_bf16 (or take a oneDNN with the fix), and report the kernel to oneDNN.

What happens: On an AVX512_BF16 CPU without AMX (AMD EPYC Zen 4), with oneDNN on, a bfloat16 tf.nn.conv3d of a 1x1x6x7x1 NDHWC input (depth 1, one channel) padded (2, 3, 0) by tf.pad, kernel 3x4x2x1x2, strides (1, 2, 1), VALID, returns 115 of 180 outputs wrong by up to 19 inside a tf.function, where the pad is folded into the convolution; eagerly (padded tensor) it is right. Eager tf.nn.conv3d and Keras Conv3D with padding SAME are wrong too, with values up to inf or NaN. Of 217 random such shapes under tf.function, 198 are wrong, all with depth padding in front and a last kernel > 1. float32, TF_ENABLE_ONEDNN_OPTS=0 and ONEDNN_MAX_CPU_ISA=AVX512_CORE (jit_bf16:avx512_core) are right. PyTorch and OpenVINO return the same wrong values through the same oneDNN kernel.

Expected: the float64 result (https://www.tensorflow.org/api_docs/python/tf/nn/conv3d).

Mechanism: ONEDNN_VERBOSE: brg_conv_fwd:avx512_core_bf16 (oneDNN v3.7.3; mb1_ic1oc2_id1od3kd3sd1dd0pd2_ih6oh5kh4sh2dh0ph3_iw7ow6kw2sw1dw0pw0); the eager call, right, runs id5 pd0; not located further in oneDNN's source.
"""
import sys

import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
rng = np.random.default_rng(0)
x = rng.integers(-3, 4, (1, 1, 6, 7, 1)).astype(np.float32)  # NDHWC, depth 1, one channel
w = rng.integers(-2, 3, (3, 4, 2, 1, 2)).astype(np.float32)  # DHWIO
pads = [[0, 0], [2, 2], [3, 3], [0, 0], [0, 0]]
def conv(x, w): return tf.nn.conv3d(tf.pad(x, pads), w, [1, 1, 2, 1, 1], "VALID")
want = conv(x.astype(np.float64), w.astype(np.float64)).numpy()  # exact on small integers
got = tf.function(conv)(tf.constant(x, tf.bfloat16), tf.constant(w, tf.bfloat16)).numpy().astype(np.float64)
print("float64 (exact), first 8:", want.ravel()[:8].tolist())
print("bfloat16 tf.function, first 8:", got.ravel()[:8].tolist())
wrong = int((got != want).sum())
print(f"{wrong} of {got.size} outputs wrong, max error {np.abs(got - want).max()}")
sys.exit(1 if wrong else 0)
