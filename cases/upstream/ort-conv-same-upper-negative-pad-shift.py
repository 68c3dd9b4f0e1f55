"""Conv with auto_pad SAME_UPPER reads every window late where the stride overshoots the input by 3 or more (pad_needed not clamped at 0)

Kind: wrong-value
Ask: Please clamp the total SAME pad at 0 before splitting it (#10086 points at the line); here is a reproducer with wrong outputs.

What happens: A float32 Conv over x = 1..12, kernel 1, strides 4, auto_pad SAME_UPPER needs no padding, so it should return x[0], x[4], x[8] = [1, 5, 9]. ONNX Runtime's CPU provider returns [2, 6, 10], every window one element late. Its total pad, (ceil(L / s) - 1) * s + k - L, is -3 here; from -3 down the windows shift by trunc(-(pad + 1) / 2) (pads -1 to -7: 0, 0, 1, 1, 2, 2, 3). At every optimization level, in float16, grouped, 2-D and 3-D, and in QLinearConv alike; explicit pads [0, 0] are right.

Expected: [1, 5, 9]: SAME_UPPER pads by max(0, (ceil(L / s) - 1) * s + k - L) (https://onnx.ai/onnx/operators/onnx__Conv.html).

Mechanism: ComputePadAndOutputShape (onnxruntime/core/providers/cpu/nn/conv_attributes.h) does not clamp pad_needed at 0, as #10086 reads from the code.
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 12)
node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1], strides=[4], auto_pad="SAME_UPPER")
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3])],
                          [numpy_helper.from_array(np.ones((1, 1, 1), np.float32), "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
print("onnxruntime", ort.__version__, "onnx", onnx.__version__)
print("expected      ", x[0, 0, ::4])
print("onnx.reference", ReferenceEvaluator(model).run(None, {"x": x})[0].ravel())
print("onnxruntime   ", got.ravel())
sys.exit(0 if np.array_equal(got.ravel(), x[0, 0, ::4]) else 1)
