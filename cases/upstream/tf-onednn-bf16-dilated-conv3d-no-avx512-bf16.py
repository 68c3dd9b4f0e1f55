"""With oneDNN on, a dilated bfloat16 tf.nn.conv3d is refused on CPUs without AVX-512F, while float32 runs

Kind: valid-refused
Ask: dilation support in the CPU Conv3D kernel that bfloat16 falls back to (this issue's subject), or a fallback that takes what the oneDNN path takes.

What happens: with `TF_ENABLE_ONEDNN_OPTS=1` on an AVX2-only AMD EPYC (measured 2026-11-25, eager and in `tf.function`), `tf.nn.conv3d(x, w, [1] * 5, "VALID", dilations=[1, 1, 2, 2, 1])` in bfloat16 raises "CPU implementation of Conv3D currently only supports dilated rates of 1", while the same call in float32 runs and is right. On a CPU with AVX-512F (an AMD EPYC Zen 4, 2026-11-29) both run and are exact on integer data.

Expected: a dtype does not change which convolutions run: oneDNN runs this one in float32 on the same CPU, and in bfloat16 where TensorFlow gives it bfloat16.

Mechanism: TensorFlow hands bfloat16 ops to oneDNN only where `IsDataTypeSupportedByOneDNNOnThisCPU(bfloat16)` holds (`tensorflow/core/util/util.cc`: AVX512F or AVX_NE_CONVERT); elsewhere it falls back, silently, to its own Conv3D (`tensorflow/core/kernels/conv_ops_3d.cc`), which refuses any dilation above 1 on CPU.
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
