"""With oneDNN on, a dilated bfloat16 tf.nn.conv3d is refused on CPUs without AVX-512F, while float32 runs

Kind: valid-refused
Ask: dilation support in the CPU Conv3D kernel bfloat16 falls back to (this issue's subject), or a fallback that takes what the oneDNN path takes.

What happens: With `TF_ENABLE_ONEDNN_OPTS=1` on an AVX2-only AMD EPYC (2026-11-25, eager and `tf.function`), `tf.nn.conv3d(x, w, [1] * 5, "VALID", dilations=[1, 1, 2, 2, 1])` in bfloat16 raises "CPU implementation of Conv3D currently only supports dilated rates of 1", while float32 runs and is right. With AVX-512F (AMD EPYC Zen 4, 2026-11-29) both run and are exact.

Expected: the dtype does not decide which convolutions run: oneDNN runs this one in float32 on the same CPU.

Mechanism: TensorFlow gives bfloat16 ops to oneDNN only where `IsDataTypeSupportedByOneDNNOnThisCPU(bfloat16)` holds (`tensorflow/core/util/util.cc`: AVX512F or AVX_NE_CONVERT); elsewhere it falls back silently to `conv_ops_3d.cc`, whose CPU Conv3D refuses any dilation above 1.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # oneDNN on, also on CPUs where it is off by default
import numpy as np
import tensorflow as tf

print("tensorflow", tf.__version__)
x = np.arange(1 * 4 * 5 * 5 * 1).reshape(1, 4, 5, 5, 1) % 3
w = np.ones((1, 2, 2, 1, 1))
refused = []
for dtype in (tf.float32, tf.bfloat16):
    try:
        y = tf.nn.conv3d(tf.constant(x, dtype), tf.constant(w, dtype), [1] * 5, "VALID", dilations=[1, 1, 2, 2, 1])
        print(f"{dtype.name}: ran, output {y.shape}")
    except tf.errors.InvalidArgumentError as exc:  # the defect for bfloat16
        print(dtype.name + ":", exc.message.split("}} ")[-1].strip())
        refused.append(dtype.name)
sys.exit(1 if refused else 0)
