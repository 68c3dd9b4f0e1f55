"""[CPU] bf16 Convolution with one input channel is wrong for a padded input depth of 1, and for an output width of 1 after a stride

Kind: wrong-value
Ask: a fix: the bf16 brgconv convolution should compute these shapes as the f32 path does.

What happens: Where the CPU plugin executes in bf16 (default on AVX512_BF16 CPUs; here AMD Zen 4), a Convolution of a 1x1x1x6x7 input (one channel, depth 1), kernel 2x1x3x4x2, strides (1, 2, 1), pads (2, 3, 0) runs as brgconv_avx512_bf16 and returns 109 of 180 outputs wrong by up to 19 on small integers, exact in bf16. INFERENCE_PRECISION_HINT f32 and ONEDNN_MAX_CPU_ISA=AVX512_CORE (jit_avx512_bf16) are right. 233 of 294 random such shapes are wrong; 2-4 input channels are right. PyTorch and TensorFlow give the same wrong values through oneDNN's brg_conv_fwd:avx512_core_bf16.

Expected: the f32 result (https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/convolution-1.html).

Mechanism: not located: the brgconv_avx512_bf16 kernel the plugin reports (OpenVINO's oneDNN fork).

Symptoms:
- conv3d, one input channel, input depth 1 padded in front (the snippet).
- one input channel per group, output width 1 after a width stride > 1: a bf16 depthwise conv, input 4x3, kernel 3x4, strides (1, 3): 47 of 64 outputs wrong.
"""
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

core = ov.Core()
print("openvino", ov.__version__, "| default INFERENCE_PRECISION_HINT:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
x = np.random.default_rng(0).integers(-3, 4, (1, 1, 1, 6, 7)).astype(np.float32)  # NCDHW: one channel, depth 1
w = np.random.default_rng(1).integers(-2, 3, (2, 1, 3, 4, 2)).astype(np.float32)
model = ov.Model([ops.convolution(p := ops.parameter(x.shape, np.float32), ops.constant(w), [1, 2, 1], [2, 3, 0], [2, 3, 0], [1, 1, 1])], [p])
out = {}
for hint in ("f32", None):  # products and sums of these integers are exact in bf16 and f32
    c = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint} if hint else {})
    kernel = next(o.get_rt_info()["primitiveType"].astype(str) for o in c.get_runtime_model().get_ordered_ops() if o.get_rt_info()["layerType"].astype(str) == "Convolution")
    out[hint] = c({0: x})[0].astype(np.float64)
    print(hint or "default", kernel, "first 8:", out[hint].ravel()[:8].tolist())
wrong = int((out[None] != out["f32"]).sum())
print(f"{wrong} of {out[None].size} outputs differ from f32, max {np.abs(out[None] - out['f32']).max()}")
sys.exit(1 if wrong else 0)
