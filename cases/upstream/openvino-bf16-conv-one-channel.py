"""[CPU] bf16 Convolution with one input channel per group is wrong where the output width is 1 after a width stride > 1

Kind: wrong-value
Ask: a fix: the bf16 brgconv convolution should compute these shapes as the f32 path does.

What happens: Where the CPU plugin executes in bf16 (the default on AVX512_BF16 CPUs; here an Intel Xeon with AMX), a GroupConvolution of a 4x2x4x3 input (2 groups, one input channel and two outputs each), kernel 3x4, strides (1, 3), pads_begin (2, 1), pads_end (0, 1), whose output width is 1, runs as brgconv_avx512_bf16 and returns 48 of 64 outputs wrong by up to 31 on small integers, exact in bf16. INFERENCE_PRECISION_HINT f32 (jit_avx512_f32) is right. PyTorch gives the same wrong values through oneDNN's brg_conv_fwd.

Expected: the f32 result (https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/group-convolution-1.html).

Mechanism: not located: the brgconv_avx512_bf16 kernel the plugin reports (OpenVINO's oneDNN fork). pytorch/pytorch#169688 reports wrong bf16 brg_conv_fwd results at output width 1 with a width stride > 1.

Symptoms:
float32 and bfloat16 models: one input channel per group, conv2d and conv3d.
int8 QDQ models in channels_last: run as a bf16 Convolution, the same rows wrong (conv3d: where the input depth is 1).
"""
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

core = ov.Core()
print("openvino", ov.__version__, "| default INFERENCE_PRECISION_HINT:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
x = np.random.default_rng(0).integers(-3, 4, (4, 2, 4, 3)).astype(np.float32)  # NCHW: 2 channels, W 3
w = np.random.default_rng(1).integers(-2, 3, (2, 2, 1, 3, 4)).astype(np.float32)  # groups 2, 2 outputs each; output width 1
model = ov.Model([ops.group_convolution(p := ops.parameter(x.shape, np.float32), ops.constant(w), [1, 3], [2, 1], [0, 1], [1, 1])], [p])
out = {}
for hint in ("f32", None):  # products and sums of these integers are exact in bf16 and f32
    c = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint} if hint else {})
    kernel = next(o.get_rt_info()["primitiveType"].astype(str) for o in c.get_runtime_model().get_ordered_ops() if o.get_rt_info()["layerType"].astype(str) == "Convolution")
    out[hint] = c({0: x})[0].astype(np.float64)
    print(hint or "default", kernel, "first 8:", out[hint].ravel()[:8].tolist())
wrong = int((out[None] != out["f32"]).sum())
print(f"{wrong} of {out[None].size} outputs differ from f32, max {np.abs(out[None] - out['f32']).max()}")
sys.exit(1 if wrong else 0)
