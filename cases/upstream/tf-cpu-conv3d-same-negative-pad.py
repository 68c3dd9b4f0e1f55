"""tf.nn.conv3d with padding="SAME" on CPU reads a shifted window when the stride exceeds the kernel by 2 or more

Kind: wrong-value
Ask: A fix: clamp Conv3D's SAME padding at 0 before halving it, as the 2-D patch code does.

What happens: With oneDNN off (TF_ENABLE_ONEDNN_OPTS=0, the default without AVX-512 VNNI/BF16/AMX), tf.nn.conv3d(padding="SAME") returns 2, not 1, for H = 3, kernel 1, stride 3. Of 360 single-axis shapes (kernel 1-3, stride 1-5, length 1-8), exactly the 45 with pad_total = (out - 1) * stride + kernel - in <= -2 are wrong, shifted by trunc(pad_total / 2).

Expected: SAME pads max(pad_total, 0), half before (https://www.tensorflow.org/api_docs/python/tf/nn#notes_on_padding_2): here none, as VALID.

Mechanism: Eigen's TensorVolumePatch.h (vendored; lines 269-274 in tensorflow-cpu 2.21.0, unchanged on Eigen master) halves dz into the top padding for PADDING_SAME without clamping it at 0; TensorImagePatch.h clamps (#14601).

Symptoms:
- oneDNN off: tf.nn.conv3d, eager and tf.function, in float32, float64, float16 and bfloat16.
- oneDNN on: float64, and float16/bfloat16 where they stay off oneDNN (float16 on AMD Zen 4).
- keras.layers.Conv3D (channels_last, ungrouped) and keras.ops.conv.
"""
import os
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # TensorFlow's own CPU Conv3D, as on CPUs without AVX-512 VNNI/BF16/AMX
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import sys

import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
x = np.arange(1, 4, dtype=np.float32).reshape(1, 1, 3, 1, 1)  # N, D, H, W, C: H holds 1, 2, 3
w = np.ones((1, 1, 1, 1, 1), np.float32)  # a 1x1x1 kernel of value 1
same = tf.nn.conv3d(x, w, [1, 1, 3, 1, 1], "SAME").numpy().ravel()  # out H = ceil(3 / 3) = 1, pad_total -2 -> 0
valid = tf.nn.conv3d(x, w, [1, 1, 3, 1, 1], "VALID").numpy().ravel()  # no padding: the same convolution
same2d = tf.nn.conv2d(x[0], w[0], [1, 3, 1, 1], "SAME").numpy().ravel()  # the 2-D op, the same geometry
print(f"conv3d SAME: {same}, conv3d VALID: {valid}, conv2d SAME: {same2d}, expected: [1.]")
sys.exit(0 if same.tolist() == valid.tolist() == [1.0] else 1)
