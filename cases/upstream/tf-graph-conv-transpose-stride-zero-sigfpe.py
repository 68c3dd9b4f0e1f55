"""tf.nn.conv2d_transpose with a stride of 0 inside tf.function kills the process with SIGFPE in Grappler's cost estimator, instead of raising

Kind: crash
Ask: A fix: OpLevelCostEstimator::ConvolutionDimensionsFromInputs should refuse a stride below 1 (return an error status, as the kernel does) instead of dividing by it.

What happens: tf.nn.conv2d_transpose(x, w, output_shape=[1, 5, 6, 4], strides=[1, 0], padding="SAME") on a 1x5x6x4 input raises InvalidArgumentError in eager mode ("Stride must be > 0, but got 0" with oneDNN on; "Row and column strides should be larger than 0" with TF_ENABLE_ONEDNN_OPTS=0), but the same call in a tf.function kills the process with SIGFPE (integer division by zero), with oneDNN on and off; strides [0, 0] likewise. With tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True}) the tf.function raises the eager error.

Expected: the InvalidArgumentError eager mode raises (https://www.tensorflow.org/api_docs/python/tf/nn/conv2d_transpose: strides must be positive); never a signal.

Mechanism: gdb shows the division in tensorflow/core/grappler/costs/op_level_cost_estimator.cc, OpLevelCostEstimator::ConvolutionDimensionsFromInputs, called from CountConv2DBackpropInputOperations / PredictConv2DBackpropInput while MemoryOptimizer (SwappingPass -> GraphMemory::InferStatically -> AnalyticalCostEstimator) estimates costs: the output size is computed as a quotient by the stride, which nothing has validated yet.
"""
import sys

import tensorflow as tf

print("tensorflow", tf.__version__, flush=True)
x, w = tf.ones([1, 5, 6, 4]), tf.ones([3, 3, 4, 4])  # NHWC input, (kh, kw, out, in) filter
conv = lambda x, w: tf.nn.conv2d_transpose(x, w, output_shape=[1, 5, 6, 4], strides=[1, 0], padding="SAME")
try:
    conv(x, w)
except tf.errors.InvalidArgumentError as exc:
    print("eager: InvalidArgumentError:", exc.message.split("}} ")[-1], flush=True)
try:
    tf.function(conv)(x, w)  # SIGFPE here where the defect shows
except tf.errors.InvalidArgumentError as exc:
    sys.exit(print("tf.function: InvalidArgumentError, as expected:", exc.message.split("}} ")[-1][:80]))  # exit 0
print("tf.function returned a tensor (an InvalidArgumentError was expected)")
sys.exit(1)
