"""[ONNX FE] ConvTranspose with a negative end pad is accepted and grows the output instead of being rejected

Kind: invalid-accepted
Ask: please reject negative pads in ConvTranspose (in the ONNX import or ConvolutionBackpropData's validation), as ONNX Runtime does.

What happens: On CPU (openvino 2026.4.1), a one-node ONNX ConvTranspose (input [1, 2, 3, 4], kernel [1, 1, 1], pads [0, -1]) returns [1, 3, 6, 9, 7, 4, 0]: the full output plus one zero (or the bias) per negative unit; 2-D and 3-D alike (pads [0, 0, 0, -1], 3x4 input, 2x2 kernel: (1, 1, 4, 6)). A negative start pad is refused. Conv runs some negative end pads as a crop (pads [2, -1] on [1, 2, 3, 4]: [1, 3, 6]).

Expected: an error. ONNX says of ConvTranspose's pads "it can take any value greater than or equal to 0" (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html); ONNX Runtime refuses the model ("Attribute pads must not contain negative values").

Mechanism: the ONNX frontend passes the pads to ConvolutionBackpropData unchecked; its shape inference (append_spatial_shape, src/core/shape_inference/include/convolution_backprop_shape_inference_util.hpp) computes (L - 1) * stride + dilated kernel + output_padding - pads_begin - pads_end with no sign check, and the CPU deconvolution writes zeros in the extra positions. An opset13 ConvolutionBackpropData with pads_end [-1] does the same.
"""
import sys
import tempfile
import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper
print("openvino", ov.__version__)
x, w = np.array([[[1, 2, 3, 4]]], np.float32), np.ones((1, 1, 3), np.float32)
graph = helper.make_graph([helper.make_node("ConvTranspose", ["x", "w"], ["y"], pads=[0, -1])], "g", [
    helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape), helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape)],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path := tempfile.mkdtemp() + "/convtranspose.onnx")
print("pads [0, 0] would give", np.convolve(x[0, 0], w[0, 0]).tolist())
try:
    y = ov.Core().compile_model(path, "CPU")([x, w])[0]  # an error expected here
except RuntimeError as exc:
    sys.exit(print("pads [0, -1]: refused, as expected:", str(exc).strip().splitlines()[-1][:120]))  # exit status 0
sys.exit(print(f"pads [0, -1]: accepted (an error was expected), returned {y[0, 0].tolist()}") or 1)
