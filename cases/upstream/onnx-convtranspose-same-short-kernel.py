"""ConvTranspose auto_pad SAME with kernel < stride: shape inference gives (L-1)*stride + kernel, the operator text and onnx.reference L*stride

Kind: wrong-value
Ask: a fix to shape inference (input * stride, as the text says), and a sentence on where an uncovered element goes.

What happens: ConvTranspose, auto_pad SAME_UPPER or SAME_LOWER, strides 2, kernel 1, length-3 input: shape inference says [1, 1, 5]; onnx.reference returns 6 elements. Unchanged in onnx 1.23.2.

Expected: "SAME_UPPER or SAME_LOWER mean pad the input so that output_shape[i] = input_shape[i] * strides[i]" (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html): 6. The total padding is then -1; where the uncovered element goes is unsaid (TensorFlow appends it).

Mechanism: onnx/defs/nn/defs.cc, convTransposeShapeInference, clamps the total padding at 0 (lines 1227-1228, main f754691); onnx/reference/ops/op_conv_transpose.py (lines 52-57) keeps it negative.

Symptoms:
- ONNX Runtime 1.32, OpenVINO 2026.4.1, TVM 0.27's Relax importer: 5 elements, as shape inference
- IREE 3.13: 6, but fails ("cast incompatible") when another node consumes it
"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator
print("onnx", onnx.__version__)
x, w = np.array([[[1, 2, 3]]], np.float32), np.ones((1, 1, 1), np.float32)  # length 3, kernel 1
wrong = False
for auto_pad in ("SAME_UPPER", "SAME_LOWER"):
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2], auto_pad=auto_pad)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inferred = [d.dim_value for d in shape_inference.infer_shapes(model).graph.output[0].type.tensor_type.shape.dim]
    y = ReferenceEvaluator(model).run(None, {"x": x})[0]
    print(f"{auto_pad}: operator text [1, 1, 6] | shape inference {inferred} | onnx.reference {list(y.shape)} {y[0, 0].tolist()}")
    wrong |= inferred != [1, 1, 6]
sys.exit(1 if wrong else 0)
