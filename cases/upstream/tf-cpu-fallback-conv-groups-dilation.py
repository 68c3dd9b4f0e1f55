"""CPU: dilated or grouped conv2d_transpose, Conv3D and conv gradients are refused wherever TensorFlow falls back from oneDNN (float64, explicit padding, oneDNN off)

Kind: valid-refused
Ask: a feature: dilation and groups in the CPU Conv2DBackpropInput/Filter and Conv3D kernels, or keeping such calls on oneDNN, which runs them.

What happens: With oneDNN on, a float32 SAME tf.nn.conv2d_transpose with dilation 2 or 2 groups runs. In float64, or with SAME's pads written as explicit pairs, it raises InvalidArgumentError: "Current CPU implementations do not yet support dilation rates larger than 1" / "Gradients for grouped convolutions are not supported on CPU". #28264, #8431 and #51825 were closed; 2.21.0 still refuses.

Expected: dtype and padding form do not decide what runs; oneDNN runs these on the same CPU.

Mechanism: tensorflow/core/kernels/conv_grad_input_ops.h, Conv2DCustomBackpropInputOp refuses dilation in its constructor and groups in Compute (input depth != filter depth); conv_grad_filter_ops.cc and conv_ops_3d.cc alike. The oneDNN rewrite skips float64 and explicit pads (and float16 without AVX512_FP16), so those reach these kernels, as does TF_ENABLE_ONEDNN_OPTS=0.

Symptoms:
- conv1d/2d/3d_transpose, dilated or grouped, in those cases; dilated Conv3D: float64, oneDNN off.
- Grouped or dilated conv2d gradients: explicit pads, float16, oneDNN off.
- Without oneDNN, tf.function fuses grouped Conv2D + BiasAdd into _FusedConv2D, which refuses groups.
"""
import os
import sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"  # the default on x86-64 Linux with AVX-512
import tensorflow as tf

print("tensorflow", tf.__version__, "| oneDNN on")
x = tf.reshape(tf.range(100.0) % 7, (1, 5, 5, 4))  # NHWC, small integers
explicit = [[0, 0], [2, 2], [2, 2], [0, 0]]  # the pads SAME takes here, written out
refused = 0
for dtype, depth, dilation, padding in ((tf.float32, 4, 2, "SAME"), (tf.float64, 4, 2, "SAME"), (tf.float32, 4, 2, explicit),
                                        (tf.float32, 2, 1, "SAME"), (tf.float64, 2, 1, "SAME")):  # filter depth 2 of 4: 2 groups
    name = f"{dtype.name}, dilation {dilation}, {4 // depth} group(s), padding {padding}"
    try:
        y = tf.nn.conv2d_transpose(tf.cast(x, dtype), tf.ones((3, 3, depth, 4), dtype), (1, 5, 5, 4), 1, padding, dilations=dilation)
        print(f"{name}: runs, output sum {float(tf.reduce_sum(y)):.0f}")
    except tf.errors.InvalidArgumentError as exc:
        refused += 1
        print(f"{name}: InvalidArgumentError: {exc.message.split('}}')[-1].strip()[:80]}")
sys.exit(1 if refused else 0)
