"""[oneDNN] tf.nn.conv2d_transpose with a negative output_shape dimension aborts the process (Check failed in mkl_conv_grad_input_ops.cc) instead of raising

Kind: crash
Ask: A fix: return an InvalidArgument error (OP_REQUIRES_OK) instead of a CHECK, as the non-oneDNN kernel does.

What happens: With oneDNN on (the default on x86-64 Linux), eager tf.nn.conv2d_transpose(x, w, output_shape=[1, -1, 8, 4], strides=1) kills the process with SIGABRT: "mkl_conv_grad_input_ops.cc:610] Check failed: tensor::MakeShape(input_tensor, &input_tf_shape) is OK (INVALID_ARGUMENT: Dimension -1 must be >= 0)". A negative stride, whose natural output length (L - 1) * s + k is negative (output_shape [1, -1, -2, 4] for a 5x6 input, kernel 3, stride -1), aborts the same way before the stride check runs. With TF_ENABLE_ONEDNN_OPTS=0 the same calls raise InvalidArgumentError ("Dimension -1 must be >= 0", "Row and column strides should be larger than 0"); inside tf.function the shape function refuses the shape first.

Expected: the InvalidArgumentError the default kernel raises; a CHECK failure should not be reachable from user input.

Mechanism: tensorflow/core/kernels/mkl/mkl_conv_grad_input_ops.cc, MklConvCustomBackpropInputOp::MakeInputTfShape (line 610 in 2.21.0), wraps tensor::MakeShape(input_tensor, ...) in TF_CHECK_OK, before any validation of input_sizes; PR #105574 handled only a dynamic batch of -1 there.

Symptoms:
eager conv1d/2d/3d_transpose, a negative output length: SIGABRT.
tf.function: conv1d_transpose SAME and conv3d_transpose abort too.
conv3d_transpose, stride -1, output length 0: an empty output.
"""
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # the default on x86-64 Linux; "0" makes the same call raise
import tensorflow as tf

print("tensorflow", tf.__version__, "| oneDNN on", flush=True)
x, w = tf.ones([1, 5, 6, 4]), tf.ones([3, 3, 4, 4])  # NHWC input, (kh, kw, out, in) filter
try:
    y = tf.nn.conv2d_transpose(x, w, output_shape=[1, -1, 8, 4], strides=1, padding="VALID")  # SIGABRT here
except tf.errors.InvalidArgumentError as exc:
    sys.exit(print("raised InvalidArgumentError, as expected:", exc.message.splitlines()[0][:160]))  # exit status 0
print("returned a tensor of shape", y.shape, "(an InvalidArgumentError was expected)")
sys.exit(1)
