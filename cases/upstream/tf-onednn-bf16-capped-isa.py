"""[oneDNN] With ONEDNN_MAX_CPU_ISA below the CPU, bfloat16 and float16 convolutions fail ("could not create a primitive descriptor") instead of falling back to TensorFlow's own kernels

Kind: valid-refused
Ask: a fix: decide bfloat16/float16 support from the ISA oneDNN will use (dnnl::get_effective_cpu_isa), not from CPUID alone, so that a capped oneDNN falls back as a CPU without those instructions does.

What happens: On an AVX-512 CPU (here AMD Zen 4) with ONEDNN_MAX_CPU_ISA=AVX2, tf.nn.conv2d of a bfloat16 1x4x4x2 input and a 3x3 filter raises AbortedError: "Operation received an exception:Status: 3, message: could not create a primitive descriptor for the convolution forward propagation primitive". Without the cap it runs in oneDNN; on a CPU without AVX-512F, in TensorFlow's own kernel.

Expected: the fallback a CPU without AVX-512F gets: 18 at an interior point. ONEDNN_MAX_CPU_ISA is oneDNN's documented dispatch control (https://uxlfoundation.github.io/oneDNN/dev_guide_cpu_dispatcher_control.html).

Mechanism: TensorFlow routes a bfloat16 or float16 op to oneDNN when IsDataTypeSupportedByOneDNNOnThisCPU holds (tensorflow/core/util/util.cc, since PR #62011), which reads CPUID (port::TestCPUFeature); oneDNN capped below AVX512_CORE then has no kernel for the type, and primitive creation fails with no fallback.

Symptoms:
- bfloat16: tf.nn and Keras convolutions and their gradients raise.
- float16 on an AVX512_FP16 CPU (Sapphire Rapids) capped at AVX2: every float16 convolution and gradient raises but conv2d_transpose with explicit pads.
"""
import os
import sys

os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # oneDNN capped below the CPU's AVX512_BF16
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf

print("tensorflow", tf.__version__, "| ONEDNN_MAX_CPU_ISA", os.environ["ONEDNN_MAX_CPU_ISA"])
x, w = tf.ones((1, 4, 4, 2), tf.bfloat16), tf.ones((3, 3, 2, 2), tf.bfloat16)
try:
    y = tf.nn.conv2d(x, w, 1, "SAME")
    print("bfloat16 conv2d runs: interior value", float(y[0, 1, 1, 0]), "(expected 18)")
    sys.exit(0)
except tf.errors.OpError as exc:
    print(f"bfloat16 conv2d: {type(exc).__name__}: {exc.message.split('}}')[-1].strip().splitlines()[0][:120]}")
    sys.exit(1)
