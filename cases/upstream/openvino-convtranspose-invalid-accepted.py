"""[ONNX FE][Core] ConvTranspose accepts an output_padding not below max(stride, dilation) and an output length of 0 instead of refusing the model

Kind: invalid-accepted
Ask: an error for both, as ONNX Runtime gives: output_padding >= max(stride, dilation) along an axis, and an output length below 1.

What happens: An ONNX ConvTranspose over x [1, 2, 3], w [1, 10] with output_padding 1 at strides 1 compiles and returns [1, 12, 23, 30, 0]: the full result plus one element no input reaches (output_padding 2 at strides 2 the same). With strides 2 and pads [3, 3] (output length 0) it returns an empty (1, 1, 0) tensor; length -2 is refused, but with "Destination memory is undefined". ONNX Runtime 1.32 refuses both; onnx.reference refuses the first.

Expected: "Each padding value in output_padding must be less than the corresponding stride/dilation dimension", and at least one output element (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html).

Mechanism: src/core/shape_inference/include/convolution_backprop_shape_inference_util.hpp, append_spatial_shape, has no lower bound, and ConvolutionBackpropData's validation never compares output_padding with strides and dilations.

Symptoms:
- output_padding >= max(stride, dilation): a longer output
- an output length of exactly 0: an empty tensor
"""
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
core = ov.Core()
print("openvino", ov.__version__)
bad = []
for attributes in ({"output_padding": [1]}, {"strides": [2], "pads": [3, 3]}):
    graph = helper.make_graph([helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attributes)], "convtranspose", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(np.array([[[1, 10]]], np.float32), "w")])
    try:
        compiled = core.compile_model(core.read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        y = compiled({"x": np.array([[[1, 2, 3]]], np.float32)})[0]
        bad.append(attributes)
        print(attributes, "-> expected an error, got shape", y.shape, y.ravel().tolist())
    except RuntimeError as exc:
        print(attributes, "-> refused:", str(exc).strip().splitlines()[-1][:150])
sys.exit(1 if bad else 0)
