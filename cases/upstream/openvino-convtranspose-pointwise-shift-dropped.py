"""[CPU] ConvolutionBackpropData with a 1-wide kernel at stride 1 ignores pads_begin when output_padding restores the length

Kind: wrong-value
Ask: a fix: keep pads_begin's shift (crop pads_begin, then append output_padding) when the output is as long as the input.

What happens: A transposed convolution with kernel 1, stride 1, dilation 2, pads_begin 1, pads_end 0 and output_padding 1, on x = [1, 2, 3] with weight 1, returns [1, 2, 3] instead of [2, 3, 0]. The same happens through the ONNX frontend (ConvTranspose) and in float64, bfloat16 and float32, 1-D and 2-D. Pads (2, 0) with output_padding 1 (length 2), stride 2, or a kernel of 2 are right.

Expected: [2, 3, 0]: the full result [1, 2, 3] with pads_begin elements cropped from the front and output_padding zeros appended at the end, as ConvolutionBackpropData-1's specification defines Y = stride * (X - 1) + (K - 1) * dilation + 1 - pads_begin - pads_end + output_padding, and as ONNX ConvTranspose (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html) and torch.nn.functional.conv_transpose1d compute it.

Mechanism: not located. The wrong cases are those whose output shape equals the input's, which looks like a 1x1 stride-1 shortcut that keeps the shape and drops the shift.
"""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops
print("openvino", ov.__version__)
x = np.array([[[1, 2, 3]]], np.float32)
p = ops.parameter([1, 1, 3], np.float32, name="x")
wrong = False
for pads_begin, output_padding, expected in (([1], [1], [2, 3, 0]), ([2], [1], [3, 0])):
    y = ops.convolution_backprop_data(p, ops.constant(np.ones((1, 1, 1), np.float32)), strides=[1], pads_begin=pads_begin,
                                      pads_end=[0], dilations=[2], output_padding=output_padding)
    got = ov.Core().compile_model(ov.Model([y], [p]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(x)[0].ravel().tolist()
    print(f"pads_begin={pads_begin} output_padding={output_padding}: got {got}, expected {expected}")
    wrong |= got != expected
sys.exit(1 if wrong else 0)
