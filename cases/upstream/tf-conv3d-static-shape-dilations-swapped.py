"""tf.nn.conv3d's static shape (what tf.function traces) applies the W dilation to H and the H dilation to W.

The kernel is right (eager and tf.function's runtime agree); the traced shape is not, so the TFLite
converter refuses the graph, and where the swapped size would be below 1 the trace itself fails."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
w = tf.constant(rng.standard_normal((3, 3, 3, 3, 4)), tf.float32)  # D, H, W, in, out
x = tf.constant(rng.standard_normal((1, 7, 8, 9, 3)), tf.float32)  # N, D, H, W, C
conv = lambda t: tf.nn.conv3d(t, w, [1] * 5, "VALID", dilations=[1, 1, 2, 3, 1])  # noqa: E731 - H 2, W 3
traced = tf.function(conv).get_concrete_function(tf.TensorSpec(x.shape, tf.float32)).structured_outputs.shape
print(f"tf {tf.__version__}: eager {conv(x).shape}, tf.function runtime {tf.function(conv)(x).shape}, "
      f"traced {traced} (expected D 7-2=5, H 8-2*2=4, W 9-2*3=3)")

w2 = tf.constant(rng.standard_normal((2, 2, 1, 2, 3)), tf.float32)
x2 = tf.constant(rng.standard_normal((1, 3, 3, 2, 2)), tf.float32)  # H 3 fits kernel 2 at dilation 1
conv2 = lambda t: tf.nn.conv3d(t, w2, [1] * 5, "VALID", dilations=[1, 1, 1, 3, 1])  # noqa: E731 - W 3 (kernel 1)
print("eager:", conv2(x2).shape)
try:
    print("tf.function:", tf.function(conv2)(x2).shape)
except ValueError as exc:
    print("tf.function:", next(ln.strip() for ln in str(exc).splitlines() if "Negative dimension" in ln)[:160])
