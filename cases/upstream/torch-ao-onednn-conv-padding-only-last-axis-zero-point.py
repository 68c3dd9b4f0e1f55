"""Quantized Conv2d/Conv3d (onednn, x86 engines) wrong where the last axis's one output reads only padding

Kind: wrong-value
Ask: a fix: leave the input zero-point compensation out of outputs whose taps all fall in the padding (or keep these shapes off oneDNN's brgemm int8 kernel), and report the kernel to oneDNN.

What happens: On AVX-512 VNNI CPUs (AMD EPYC Zen 4), `torch.ao.nn.quantized.Conv2d` (16 -> 8 channels, kernel 3x2, padding 1, dilation (1, 2), stride (1, 2)) on a 5x1 input, where both width taps of the single output column land in the padding, returns 0 for all 40 outputs under the onednn and x86 engines; fbgemm returns the right 128. A grouped SAME conv3d: 36 of 64 outputs up to 124 units off. It takes one output on the last axis with all its taps in the padding, and another axis padded; input zero point 0, ONEDNN_MAX_CPU_ISA=AVX2, fbgemm and qnnpack are exact. OpenVINO's int8 convolution gives the same wrong values.

Expected: padding contributes nothing, so every output equals y's zero point (https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.Conv2d.html).

Mechanism: ONEDNN_VERBOSE: brg_conv_fwd:avx512_core_vnni with attr-zero-points:src0 (weights carry the zero-point compensation, zpm3), oneDNN v3.12.0; not located further.

Symptoms:
onednn engine: Conv2d/Conv3d as above.
x86 engine: the same, where it sends a symmetric-weight conv to oneDNN (AVX512-VNNI CPUs).
"""
import sys

import torch
import torch.ao.nn.quantized as nnq

print("torch", torch.__version__, "CPU capability:", torch.backends.cpu.get_cpu_capability())
g = torch.Generator().manual_seed(0)
x = torch.quantize_per_tensor(torch.randint(-8, 9, (1, 16, 5, 1), generator=g) * 0.1, 0.1, 128, torch.quint8)
w = torch.quantize_per_tensor(torch.randint(-5, 6, (8, 16, 3, 2), generator=g) * 0.01, 0.01, 0, torch.qint8)
bad = 0
for engine in ("fbgemm", "onednn", "x86"):
    torch.backends.quantized.engine = engine
    # width: input 1, kernel 2 with dilation 2, padding 1 -> one output whose taps both land in the padding
    m = nnq.Conv2d(16, 8, (3, 2), stride=(1, 2), padding=1, dilation=(1, 2), bias=False)
    m.set_weight_bias(w, None)
    m.scale, m.zero_point = 0.05, 128
    y = m(x).int_repr().int()  # every output reads only zeros: expected y's zero point, 128, everywhere
    print(f"{engine}: {int((y != 128).sum())} of {y.numel()} outputs differ from 128, largest |diff|", int((y - 128).abs().max()))
    bad += engine != "fbgemm" and bool((y != 128).any())
sys.exit(1 if bad else 0)
