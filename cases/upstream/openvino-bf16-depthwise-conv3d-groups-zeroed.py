"""[CPU] bf16 depthwise Conv 3-D with channel multiplier 2 returns zeros for half its output channels (one input depth plane, one padded side)

Kind: wrong-value
Ask: a fix: the bf16 brgconv convolution should compute every output channel, as the f32 path does.

What happens: Where the default inference precision is bf16 (AVX512_BF16 or AMX; here AMD Zen 4), an ONNX Conv with group 4 over a 1x4x1x2x2 input of ones, weights 8x1x2x1x2 of ones (two output channels per group) and depth pads [1, 0] runs as bf16/brgconv_avx512_bf16 and returns 2 in output channels 0-3 but 0 in 4-7. With INFERENCE_PRECISION_HINT f32 (jit_avx512_f32) all are 2. Integer data are exact in bf16: this is not rounding. Measured region: one input depth plane, depth kernel 2 with one padded side, W kernel >= 2, groups >= 4 with >= 2 outputs per group.

Expected: 2 in every output channel (https://onnx.ai/onnx/operators/onnx__Conv.html).

Mechanism: not located: OpenVINO's oneDNN fork, the brgconv_avx512_bf16 kernel the plugin reports.
"""
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
core = ov.Core()
print("openvino", ov.__version__, "| default INFERENCE_PRECISION_HINT:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
node = helper.make_node("Conv", ["x", "w"], ["y"], group=4, pads=[1, 0, 0, 0, 0, 0])  # depth padded at the start only
graph = helper.make_graph([node], "depthwise_conv3d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1, 2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 2, 1])], [numpy_helper.from_array(np.ones((8, 1, 2, 1, 2), np.float32), "w")])
model = core.read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
for config in ({"INFERENCE_PRECISION_HINT": "f32"}, {}):  # the default configuration last
    compiled = core.compile_model(model, "CPU", config)
    kernel = next(op.get_rt_info()["primitiveType"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops() if op.get_rt_info()["layerType"].astype(str) == "Convolution")
    y = compiled({"x": np.ones((1, 4, 1, 2, 2), np.float32)})[0][0, :, 0, 0, 0]
    print(config or "default config", f"({kernel}): output channels 0-7 at [0, 0, 0]:", y.tolist(), "(expected all 2.0)")
sys.exit(0 if (y == 2).all() else 1)
