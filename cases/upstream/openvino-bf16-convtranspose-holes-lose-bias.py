"""[CPU] bf16 ConvolutionBackpropData + bias on AMX: outputs no input reaches are 0 instead of the bias when the output width is not a multiple of the stride

Kind: wrong-value
Ask: a fix: the AMX bf16 deconvolution should write the bias (and fused post-ops) to every output, as its non-AMX path does.

What happens: On a CPU with AMX, a bf16 ConvolutionBackpropData (4 -> 2 channels, kernel 2x2, strides (1, 3), input 3x4) plus a per-channel Add runs as brgconv_avx512_amx_bf16: the 24 outputs no input reaches (columns 2, 5, 8 of width 11) are 0 instead of the bias; the other 64 are exact. It shows when this kernel runs (even input channels per group, 2-D or 3-D, no dilation, kernel over 1x1), a stride exceeds its kernel, and the output width is not a multiple of the width stride: of 27 combinations of width pads and output_padding, exactly those. ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16, odd channel counts and f32 are right.

Expected: the outputs no input reaches hold the bias (https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/convolution-backprop-data-1.html; ONNX ConvTranspose adds B to every output, https://onnx.ai/onnx/operators/onnx__ConvTranspose.html).

Mechanism: oneDNN 3.13 computes the last width block of an uneven output width in a zeroed scratch buffer, and src/cpu/x64/jit_brgemm_conv_bwd_strided.cpp, brgemm_convolution_bwd_strided_t::ker_trans, skips perform_outwork (bias, post-ops) for positions with no kernel taps on the AMX path when that buffer is in use (v3.13 line 1848, still in main; from uxlfoundation/oneDNN#5368). Read in upstream oneDNN, not the plugin's fork.
"""
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

x = np.random.default_rng(0).integers(-3, 4, (1, 4, 3, 4)).astype(np.float32)  # NCHW: 4 input channels, 3x4
w = np.random.default_rng(1).integers(-2, 3, (4, 2, 2, 2)).astype(np.float32)  # 4 -> 2 channels, kernel 2x2
b = np.array([5.0, -3.0], np.float32).reshape(1, 2, 1, 1)
bf16 = lambda node: ops.convert(node, "bf16")
p = ops.parameter(x.shape, np.float32)
y = ops.add(ops.convolution_backprop_data(bf16(p), bf16(ops.constant(w)), [1, 3], None, [0, 0], [0, 0]), bf16(ops.constant(b)))
c = ov.Core().compile_model(ov.Model([ops.convert(y, "f32")], [p]), "CPU")
kernel = next(o.get_rt_info()["primitiveType"].astype(str) for o in c.get_runtime_model().get_ordered_ops() if o.get_rt_info()["layerType"].astype(str) == "Deconvolution")
got = c({0: x})[0]
want = np.zeros(got.shape, np.float32) + b  # stride 3, kernel width 2: output columns 2, 5, 8 get no input, only the bias
for i, j in np.ndindex(2, 2):
    want[:, :, i:i + 3, j::3][..., :4] += np.einsum("nchw,co->nohw", x, w[:, :, i, j])
print("openvino", ov.__version__, "|", kernel, "| output", got.shape, "| column 2 of channel 0:", got[0, 0, :, 2].tolist(), "expected", want[0, 0, :, 2].tolist(), f"\n{int((got != want).sum())} of {got.size} outputs wrong, max error {float(np.abs(got - want).max())}")
sys.exit(1 if (got != want).any() else 0)
