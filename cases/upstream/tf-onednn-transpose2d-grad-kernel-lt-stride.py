"""[oneDNN] The gradient of tf.nn.conv2d_transpose with a kernel shorter than its stride corrupts the heap on AVX-512 CPUs (SIGABRT "corrupted double-linked list", SIGSEGV)

Kind: crash
Ask: a fix: the oneDNN backward kernels must handle a kernel shorter than the stride (or leave such convolutions to TensorFlow's own kernels), and never write outside their buffers.

What happens: With oneDNN on (the default on x86-64 Linux), tape.gradient of tf.nn.conv2d_transpose(x, w, [1, 8, 10, 6], strides=2, padding="SAME") with a 1x1 kernel (x 1x4x5x4, w 1x1x6x4) kills the process (AMD Zen 4): glibc aborts with "corrupted double-linked list", "corrupted size vs. prev_size" or "double free or corruption", or it dies with SIGSEGV. With TF_ENABLE_ONEDNN_OPTS=0, or ONEDNN_MAX_CPU_ISA=AVX2, the same script prints the right gradients. Keras Conv2DTranspose alike.

Expected: the gradients: 6 for every input element (each feeds six outputs through a weight of 1) and 20 for every weight (twenty input pixels), as TensorFlow's own kernels give.

Mechanism: not pinned to a line. ONEDNN_VERBOSE shows the forward as brgconv_strided:avx512_core backward_data (mb1_ic6oc4_ih8oh4kh1sh2, where no tap reaches half the output rows and columns) and the filter gradient as jit_1x1:avx512_core backward_weights; the process dies right after them, in the oneDNN kernels or the glue in tensorflow/core/kernels/mkl/. The same class as #2066 (backward segfault when stride > kernel size).
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # the default on x86-64 Linux; "0" makes the same script pass
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__, flush=True)
x, w = tf.Variable(tf.ones((1, 4, 5, 4))), tf.Variable(tf.ones((1, 1, 6, 4)))  # NHWC; (kh, kw, out, in): 1x1 kernel
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.nn.conv2d_transpose(x, w, [1, 8, 10, 6], 2, "SAME"))  # stride 2 > kernel 1
gx, gw = tape.gradient(loss, [x, w])  # dies here: "corrupted double-linked list" / "double free" (SIGABRT)
gx, gw = [np.unique(g.numpy()).tolist() if g is not None else None for g in (gx, gw)]
print("grad of x: expected [6.0] everywhere, got", gx, "| grad of w: expected [20.0], got", gw, flush=True)
sys.exit(0 if gx == [6.0] and gw == [20.0] else 1)
