"""Grappler constant folding aborts the process on Conv2D followed by two multiplies by constants (MulConvPushDown: Check failed: size >= 0)

Kind: crash
Ask: a fix: IsValidConstShapeForMulConvPushDown should decline a filter whose shape is not known instead of building a TensorShape from it.

What happens: Grappler's constfold pass, run on the graph of `conv2d(x, w) / c1 / c2` (bias-less conv, per-channel constants of shape (1, C, 1, 1), NCHW), kills the process with SIGABRT: "tensor_shape.cc:416 Check failed: size >= 0 (-2 vs. 0)". tf2onnx runs exactly this pass on every model it converts, so converting such a model aborts the converter. Two multiplies, two divides or a divide and a multiply by constants abort it, in NCHW; in NHWC when the first is a divide. Conv3D aborts the same way. One multiply, a scalar, or a bias add or relu in between is folded correctly.

Expected: the graph optimized (the two constants folded into the filter, or left as they are).

Mechanism: ConstantFolding::MulConvPushDown (tensorflow/core/grappler/optimizers/constant_folding.cc) folds Mul(Conv(X, W), C) into Conv(X, W * C). On the second multiply, IsValidConstShapeForMulConvPushDown reads the filter's shape from the graph properties; the new filter node from the first push-down has unknown rank there (-2 dims), and TensorShape's constructor CHECK-fails on it instead of the helper returning false.
"""
import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2
from tensorflow.python.grappler import tf_optimizer

print("tensorflow", tf.__version__, flush=True)
w = tf.constant(np.ones((3, 3, 2, 3), np.float32))
c1, c2 = (tf.constant(np.array(v, np.float32).reshape(1, 3, 1, 1)) for v in ([2, 3, 4], [5, 6, 7]))
f = tf.function(lambda x: tf.nn.conv2d(x, w, 1, "SAME", data_format="NCHW") / c1 / c2)
graph = f.get_concrete_function(tf.TensorSpec((1, 2, 5, 5), tf.float32)).graph
with tf.Graph().as_default():  # what tf2onnx's loader does (tf2onnx/tf_loader.py, tf_optimize_grappler)
    meta = tf.compat.v1.train.export_meta_graph(graph_def=graph.as_graph_def())
meta.collection_def["train_op"].node_list.value.extend([t.op.name for t in graph.outputs])
config = config_pb2.ConfigProto()
config.graph_options.rewrite_options.optimizers[:] = ["constfold"]  # Grappler's constant folding only
tf_optimizer.OptimizeGraph(config, meta)  # the process dies here by SIGABRT where the defect shows
print("conv2d(x, w) / c1 / c2: constant folding finished, no abort")
