"""[CPU] Quantized 1x1 Conv with stride 2 and pads: the stride is applied before the padding, giving the wrong length and values

Kind: wrong-value
Ask: Please let StridesOptimization move a 1x1 Convolution's stride only when its pads are zero (or keep the stride on a padded Conv).

What happens: A QDQ model (DequantizeLinear -> Conv -> QuantizeLinear) with a 1x1 Conv, strides=[2] and pads=[1, 1] on a length-5 input returns 5 values, [0, 10, 30, 50, 0], instead of 4, [0, 20, 40, 0]: the stride is taken on the unpadded input. Stride 1, a 2-tap kernel or zero pads are right.

Expected: [0, 20, 40, 0]: ONNX Conv strides over the padded input (https://onnx.ai/onnx/operators/onnx__Conv.html), as ONNX Runtime does.

Mechanism: src/common/transformations/src/transformations/common_optimizations/strides_optimization.cpp: can_propagate_conv_stride accepts a Convolution whose kernel is 1 without looking at its pads; ConvStridesPropagation sets its strides to 1, keeps the pads, and moves the stride through the dequantization's Subtract and Multiply to a kernel-1 MaxPool (insert_pooling) on the unpadded input. The runtime graph shows that Pooling node.

Symptoms:
On CPUs with AVX-512, a padded strided 1x1 quantized Conv returns the wrong length and values (above).
Below AVX-512 (and under ONEDNN_MAX_CPU_ISA=AVX2), every strided 1x1 quantized Conv, padded or not, is refused at compile_model: "Supported primitive descriptors list is empty for node: MaxPool_N type: Pooling", the inserted MaxPool.
"""
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
print("openvino", ov.__version__)
consts = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in [("w", [[[1]]], np.int8), ("s", 1.0, np.float32), ("xz", 0, np.uint8), ("wz", 0, np.int8)]]
nodes = [helper.make_node("DequantizeLinear", ["x", "s", "xz"], ["xf"]), helper.make_node("DequantizeLinear", ["w", "s", "wz"], ["wf"]),
         helper.make_node("Conv", ["xf", "wf"], ["yf"], kernel_shape=[1], strides=[2], pads=[1, 1]), helper.make_node("QuantizeLinear", ["yf", "s", "xz"], ["y"])]
graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], consts)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
x = np.array([[[10, 20, 30, 40, 50]]], np.uint8)
expected = np.pad(x, ((0, 0), (0, 0), (1, 1)))[..., ::2]  # pad, then every 2nd position
try:
    got = ov.Core().compile_model(ov.Core().read_model(model.SerializeToString(), b""), "CPU")(x)[0]
except RuntimeError as exc:  # CPUs below AVX-512: the inserted MaxPool has no uint8 implementation
    sys.exit(print("compile_model refused it:", [ln for ln in str(exc).splitlines() if "MaxPool" in ln][:1]) or 1)
print("expected", expected.ravel().tolist(), "got", got.ravel().tolist())
sys.exit(0 if got.shape == expected.shape and np.array_equal(got, expected) else 1)
