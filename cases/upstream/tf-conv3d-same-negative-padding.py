"""tf.nn.conv3d with padding='SAME' on CPU reads a shifted window when the stride exceeds the kernel.

For SAME, pad_total = (out - 1) * stride + (kernel - 1) * dilation + 1 - in is clamped at 0 (as
tf.nn.conv2d does). TF's CPU Conv3D kernel (Eigen's CuboidConvolution; oneDNN off, or a dtype oneDNN does
not take) behaves as if the top/left padding were pad_total / 2 unclamped (C truncation): once
pad_total <= -2 every output reads its window 1 (or more) elements too far, with the shape still right.
XLA (jit_compile=True) and oneDNN's float32 kernel pad correctly."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

print(f"tf {tf.__version__}, TF_ENABLE_ONEDNN_OPTS={os.environ.get('TF_ENABLE_ONEDNN_OPTS', 'unset')}")

# 1: H of 3, kernel 1, stride 3: the one output should be x[0] = 1 (pad_total = 1 - 3 = -2).
x = tf.constant(np.arange(1, 4, dtype=np.float32).reshape(1, 1, 3, 1, 1))  # N, D, H, W, C
w = tf.ones((1, 1, 1, 1, 1), tf.float32)
conv = lambda t: tf.nn.conv3d(t, w, [1, 1, 3, 1, 1], "SAME")  # noqa: E731
print("conv3d:", conv(x).numpy().ravel(), "| XLA:", tf.function(conv, jit_compile=True)(x).numpy().ravel(),
      "| conv2d, same geometry:", tf.nn.conv2d(x[0], w[0], [1, 3, 1, 1], "SAME").numpy().ravel(), "(expected [1.])")

# 2: every axis, kernel 1..3, stride 1..5, length 1..8, each dtype: which input index output 0 reads.
wrong = []
for dtype in (tf.float32, tf.float64, tf.float16, tf.bfloat16):
    bad = rule_breaks = 0
    for axis in range(3):
        for k in range(1, 4):
            for s in range(1, 6):
                for n in range(1, 9):
                    out = -(-n // s)
                    pad_total = (out - 1) * s + k - n
                    shape, kernel, strides = [1, 1, 1], [1, 1, 1], [1, 1, 1]
                    shape[axis], kernel[axis], strides[axis] = n, k, s
                    xs = np.arange(1, n + 1, dtype=np.float32).reshape(1, *shape, 1)
                    ws = (4.0 ** np.arange(k, dtype=np.float32)).reshape(*kernel, 1, 1)  # exact in every dtype
                    y = tf.nn.conv3d(tf.cast(xs, dtype), tf.cast(ws, dtype), [1, *strides, 1], "SAME")
                    y = tf.cast(y, tf.float64).numpy().ravel()
                    top = max(pad_total, 0) // 2
                    padded = np.concatenate([np.zeros(top), np.arange(1, n + 1), np.zeros(max(pad_total, 0) - top + k)])
                    expected = np.array([sum(padded[i * s + t] * 4.0**t for t in range(k)) for i in range(out)])
                    is_bad = not np.array_equal(y, expected)
                    bad += is_bad
                    rule_breaks += is_bad != (pad_total <= -2)
    wrong += [dtype.name] * bool(bad)
    print(f"{dtype.name:8s}: {bad}/360 shapes wrong; 'wrong exactly when pad_total <= -2' broken by {rule_breaks}")
print("verdict:", f"wrong results in {', '.join(wrong)}" if wrong else "not reproduced")
