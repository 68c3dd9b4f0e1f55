"""[CPU] compile_model fails ("No suitable implementations") for a QDQ Conv on int8 inputs with a nonzero zero point, at the default bf16 inference precision

Kind: valid-refused
Ask: a fix: compile such a model at the default bf16 precision as it compiles at f32 (or fall back to f32 for that node).

What happens: DequantizeLinear(x int8, zero point 3) -> Conv -> QuantizeLinear fails in compile_model where the default INFERENCE_PRECISION_HINT is bf16 (AVX512_BF16 or AMX; AMD Zen 4 and Intel Xeons): "Check '!implementations.empty()' failed at src/plugins/intel_cpu/src/nodes/executors/executor_factory.hpp:117: No suitable implementations". With INFERENCE_PRECISION_HINT f32 it compiles (i8/brgconv_avx512_f32); zero point 0, uint8 inputs (except depthwise Conv 3-D) and float -> QuantizeLinear -> DequantizeLinear -> Conv compile at bf16 too, within one unit of exact.

Expected: the model computes y = saturate(round(sum((x - x_zero_point) * w) * x_scale * w_scale / y_scale) + y_zero_point) (https://onnx.ai/onnx/operators/onnx__QLinearConv.html; QDQ form), here [[-54, -45], [-18, -9]].

Mechanism: not located to a line: the executor factory finds no entry of convolution_implementations.cpp for the configuration the bf16 pipeline gives a convolution whose input zero point is not fused.

Symptoms:
- int8 activations with a nonzero zero point, any convolution
- uint8 activations with a nonzero zero point in a depthwise Conv 3-D (one output channel per group; zero points are not fused there, PR 5563)
"""
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
core = ov.Core()
print("openvino", ov.__version__, "| default INFERENCE_PRECISION_HINT:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
x, w = np.arange(-8, 8, dtype=np.int8).reshape(1, 1, 4, 4), np.ones((1, 1, 3, 3), np.int8)
init = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (("w", w, np.int8), ("s", 1, np.float32), ("xz", 3, np.int8), ("z", 0, np.int8))]
nodes = [helper.make_node("DequantizeLinear", ["x", "s", "xz"], ["xd"]), helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wd"]),
         helper.make_node("Conv", ["xd", "wd"], ["yd"]), helper.make_node("QuantizeLinear", ["yd", "s", "z"], ["y"])]
graph = helper.make_graph(nodes, "qdq_conv", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 1, 4, 4])], [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 1, 2, 2])], init)
model = core.read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
expected = np.lib.stride_tricks.sliding_window_view(x[0, 0].astype(int) - 3, (3, 3)).sum(axis=(2, 3))
for config in ({"INFERENCE_PRECISION_HINT": "f32"}, {}):  # the default configuration last
    try:
        y = core.compile_model(model, "CPU", config)({"x": x})[0][0, 0].tolist()
    except RuntimeError as exc:
        y = str(exc).strip().splitlines()[-1][:150]
    print(config or "default config", "-> expected", expected.tolist(), "| actual", y)
sys.exit(0 if y == expected.tolist() else 1)
