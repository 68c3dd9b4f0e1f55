"""Conv3D shape inference swaps the height and width dilations

Kind: wrong-value
Ask: a fix: read the height and width dilations in order in Conv3DShape.

What happens: In a `tf.function`, `tf.nn.conv3d` over a 7x8x9 input, 3x3x3 kernel, dilations (1, 2, 3) (D, H, W) gets the static shape (1, 5, 2, 5, 1); the kernel returns (1, 5, 4, 3, 1). Where the swapped dilation does not fit, tracing refuses a valid convolution that eager TF runs.

Expected: n - d * (k - 1) per axis, with that axis' dilation (https://www.tensorflow.org/api_docs/python/tf/nn/conv3d).

Mechanism: `tensorflow/core/framework/common_shape_fns.cc` `Conv3DShape` reads `dilation_cols = dilations[2]; dilation_rows = dilations[3];` (NDHWC; `[3]`, `[4]` for NCDHW).

Symptoms:
- wrong static shapes (tf.function, SavedModel), right runtime results;
- tf.function, XLA, tf2onnx and TFLiteConverter refuse such a conv3d (table below);
- where the swapped size fits, adding a tensor of the true output shape after it fails to trace ("Dimensions must be equal").
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf

print("tensorflow", tf.__version__)
conv = lambda k, d: tf.function(lambda x: tf.nn.conv3d(x, tf.zeros(k + (1, 1)), [1] * 5, "VALID", dilations=[1, *d, 1]))
traced = conv((3, 3, 3), (1, 2, 3)).get_concrete_function(tf.TensorSpec([1, 7, 8, 9, 1])).output_shapes.as_list()
print("7x8x9, kernel 3, dilations (1, 2, 3): traced", traced, "expected [1, 5, 4, 3, 1] (7-2, 8-2*2, 9-2*3)")
try:
    fits = conv((2, 2, 1), (1, 1, 3)).get_concrete_function(tf.TensorSpec([1, 3, 3, 2, 1])).output_shapes.as_list()
except ValueError as exc:
    fits = "ValueError: " + str(exc)[str(exc).find("Negative"):].split(" for ")[0]
print("3x3x2, kernel 2x2x1, dilations (1, 1, 3): traced", fits, "expected [1, 2, 2, 2, 1]")
sys.exit(0 if traced == [1, 5, 4, 3, 1] and fits == [1, 2, 2, 2, 1] else 1)
