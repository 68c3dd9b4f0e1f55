"""tf2onnx's Grappler pass aborts on a bias-less conv followed by two constant multiplies (MulConvPushDown)

Measures: each layout (NCHW, NHWC) and epilogue (one or two multiplies/divides by a per-channel constant, a
scalar, a bias or relu in between) converted in a child process; prints which abort. Exits 1 where a two-multiply
chain aborts (the defect), 0 where none does.
"""
import os
import subprocess
import sys

CHILD = r'''
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
import tf2onnx
which, fmt = sys.argv[1], sys.argv[2]
w = tf.constant(np.ones((3, 3, 2, 3), np.float32))
shape = (1, 3, 1, 1) if fmt == "NCHW" else (1, 1, 1, 3)
c1 = tf.constant(np.array([2.0, 3.0, 4.0], np.float32).reshape(shape))
c2 = tf.constant(np.array([5.0, 6.0, 7.0], np.float32).reshape(shape))
ops = {"y/c1/c2": lambda y: y / c1 / c2, "y*c1*c2": lambda y: y * c1 * c2, "y/c1": lambda y: y / c1,
       "y*c1/c2": lambda y: y * c1 / c2, "y/c1*c2": lambda y: y / c1 * c2, "2*3*y": lambda y: y * 2.0 * 3.0,
       "relu(y/c1)/c2": lambda y: tf.nn.relu(y / c1) / c2}[which]
xs = (1, 2, 5, 5) if fmt == "NCHW" else (1, 5, 5, 2)
f = tf.function(lambda x: ops(tf.nn.conv2d(x, w, 1, "SAME", data_format=fmt)))
tf2onnx.convert.from_function(f, input_signature=[tf.TensorSpec(xs, tf.float32)], opset=17)
'''
aborted = []
for fmt in ("NCHW", "NHWC"):
    for which in ("y/c1", "2*3*y", "relu(y/c1)/c2", "y/c1/c2", "y*c1*c2", "y*c1/c2", "y/c1*c2"):
        r = subprocess.run([sys.executable, "-c", CHILD, which, fmt], capture_output=True, text=True, timeout=300)
        line = next((ln for ln in r.stderr.splitlines() if "Check failed" in ln), "")
        print(f"{fmt} conv2d -> {which:14s} exit {r.returncode:4d} {line[line.find('Check'):][:60]}")
        if r.returncode < 0 or r.returncode == 134:
            aborted.append((fmt, which))
import tensorflow as tf  # noqa: E402 - the version, after the children
print(f"tensorflow {tf.__version__}; aborted: {aborted}")
sys.exit(1 if aborted else 0)
