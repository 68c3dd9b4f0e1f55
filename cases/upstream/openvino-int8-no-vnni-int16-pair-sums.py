"""[CPU] QDQ int8 convolutions on CPUs without VNNI are off by up to 159 units: uint8 pair sums saturate at int16, int8 sources get their weights halved

Kind: wrong-value
Ask: a fix: exact results without VNNI (OpenVINO's f32-accumulating i8 convolution, used for nonzero input zero points, is exact), or a warning.

What happens: QDQ convolutions compiled where oneDNN has no VNNI (AVX2 CPUs; ONEDNN_MAX_CPU_ISA=AVX2 or AVX512_CORE here): uint8 255 against int8 127 over 4 channels, y_scale 1000, give 66 instead of 130 (each pair of products clipped to int16); int8 ones against a 3-tap kernel of ones give 0 instead of 3 (each weight acts as 2 * round(w / 2)). A 3x3 conv2d 16 -> 6 on full-range data is 47 units off on 127 of 150 outputs. With VNNI the same models are exact.

Expected: exact int32 accumulation (https://onnx.ai/onnx/operators/onnx__QLinearConv.html): 130 and 3. The saturation note (https://docs.openvino.ai/latest/pot_saturation_issue.html) covers POT-quantized weights, not QDQ models or halved int8-source weights.

Mechanism: OpenVINO's oneDNN: the u8 x s8 kernels without VNNI multiply with vpmaddubsw (int16 pair sums); for s8 sources jit_uni_x8s8s32x_conv_kernel.cpp and jit_avx512_core_x8s8s32x_conv_kernel.cpp init_conf set scale_adjust = 0.5 where !has_int8_vnni.

Symptoms:
- uint8 activations, full-range data: int16 pair saturation
- int8 activations, zero point 0: odd weights rounded to even
"""
import os
os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # the int8 kernels of a CPU without VNNI
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
core = ov.Core()
def qdq_conv(x, w, y_scale):  # DequantizeLinear -> Conv -> QuantizeLinear; zero points 0, x and w scales 1
    init = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (("w", w, np.int8), ("s", 1, np.float32), ("ys", y_scale, np.float32), ("xz", 0, x.dtype), ("wz", 0, np.int8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "xz"], ["xd"]), helper.make_node("DequantizeLinear", ["w", "s", "wz"], ["wd"]),
             helper.make_node("Conv", ["xd", "wd"], ["yd"]), helper.make_node("QuantizeLinear", ["yd", "ys", "xz"], ["y"])]
    t = TensorProto.UINT8 if x.dtype == np.uint8 else TensorProto.INT8
    graph = helper.make_graph(nodes, "qdq_conv", [helper.make_tensor_value_info("x", t, x.shape)], [helper.make_tensor_value_info("y", t, None)], init)
    return core.compile_model(core.read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()), "CPU")({"x": x})[0].item()
print("openvino", ov.__version__, "| ONEDNN_MAX_CPU_ISA", os.environ["ONEDNN_MAX_CPU_ISA"])
u8 = qdq_conv(np.full((1, 4, 1, 1), 255, np.uint8), np.full((1, 4, 1, 1), 127, np.int8), 1000.0)  # 4 * 255 * 127 / 1000 = 129.5
s8 = qdq_conv(np.ones((1, 1, 3), np.int8), np.ones((1, 1, 3), np.int8), 1.0)  # a 3-tap conv1d
print(f"uint8 255 x int8 127, 4 channels, y_scale 1000: expected 130, got {u8}\nint8 1 x int8 1, 3 taps: expected 3, got {s8}")
sys.exit(0 if (u8, s8) == (130, 3) else 1)
