"""[CPU] Grouped uint8 (QDQ) Conv 3-D: H/W padding is read as uint8 0 instead of the zero point in the u8 jit_gemm convolution (CPUs without AVX-512)

Kind: wrong-value
Ask: a fix: pad with the input zero point in im2col_dt_3d for H and W, as it already does for padded depth planes.

What happens: DequantizeLinear(uint8 x, zero point 128) -> Conv(3-D, group=2, pads on W) -> QuantizeLinear runs as the u8/jit_gemm_I8 convolution where oneDNN has no AVX-512 (AVX2 CPUs; ONEDNN_MAX_CPU_ISA=AVX2 here). Input [132, 124], weights [1, 2, 3, 4], y_scale 4: the padded W position gives [96, 64, 32, 0] instead of [128, 128, 128, 128], exactly padding with uint8 0. Kernel 2 over 3x4x5, all sides padded: 108 of 480 outputs off, up to 175 units. Ungrouped, conv2d, depth-only padding and AVX-512 (brgconv) are exact.

Expected: padding is the dequantized 0.0, the zero point 128 (https://onnx.ai/onnx/operators/onnx__Conv.html).

Mechanism: OpenVINO's oneDNN fork, src/cpu/gemm_convolution_utils.cpp im2col_dt_3d(..., input_zp): padded depth planes get input_zp, padded H/W positions keep what src/cpu/gemm_x8s8s32x_convolution.cpp execute_forward_thr filled once, shift (0 for u8). openvinotoolkit/oneDNN PR 90 (open since 2021) touches this path.
"""
import os
os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # the convolution OpenVINO picks on CPUs without AVX-512
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
print("openvino", ov.__version__, "| ONEDNN_MAX_CPU_ISA", os.environ["ONEDNN_MAX_CPU_ISA"])
x, w = np.array([132, 124], np.uint8).reshape(1, 2, 1, 1, 1), np.array([1, 2, 3, 4], np.int8).reshape(4, 1, 1, 1, 1)
init = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (("w", w, np.int8), ("s", 1, np.float32), ("ys", 4, np.float32), ("z", 128, np.uint8), ("wz", 0, np.int8))]
nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xd"]), helper.make_node("DequantizeLinear", ["w", "s", "wz"], ["wd"]),
         helper.make_node("Conv", ["xd", "wd"], ["yd"], group=2, pads=[0, 0, 0, 0, 0, 1]), helper.make_node("QuantizeLinear", ["yd", "ys", "z"], ["y"])]
graph = helper.make_graph(nodes, "qdq_grouped_conv3d", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 1, 1, 1])], [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4, 1, 1, 2])], init)
core = ov.Core()
compiled = core.compile_model(core.read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()), "CPU")
y = compiled({"x": x})[0][0, :, 0, 0, :]  # 4 output channels x 2 W positions (the second one padded)
xs = np.repeat(x.ravel().astype(int) - 128, 2)  # each input channel feeds 2 output channels (groups 2)
expected = np.stack([np.clip(np.rint(xs * w.ravel() / 4) + 128, 0, 255), np.full(4, 128)], axis=1).astype(int)
print("at W 0: expected", expected[:, 0].tolist(), "actual", y[:, 0].tolist(), "\nat W 1 (padded): expected", expected[:, 1].tolist(), "actual", y[:, 1].tolist())
sys.exit(0 if np.array_equal(y, expected) else 1)
