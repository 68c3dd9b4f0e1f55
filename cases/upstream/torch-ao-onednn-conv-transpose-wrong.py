"""Quantized ConvTranspose under the onednn engine (and x86 on AVX512-VNNI CPUs) mixes weight channels when C_in/groups != C_out/groups

Kind: wrong-value
Ask: Please fix the transposed-weight prepack of the onednn engine.

What happens: Under the onednn engine, quantized ConvTranspose1d/2d/3d are wrong when C_in/groups and C_out/groups are both above 1 and differ: impulses through a 2 -> 3 channel 1x1 kernel (w = 10..60) return [10, 50, 40] / [30, 20, 60]; random full-range 4 -> 6 (3x3) is 168 units of y off. Square blocks and vectors are exact; fbgemm and qnnpack are exact.

Expected: The weight is (C_in, C_out/groups, *kernel) (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose2d.html).

Mechanism: The output equals, bit for bit, the convolution with each (C_in/g x C_out/g) weight block transposed twice, each time read as C_out/g x C_in/g: one channel-axis swap too many. Both swaps are in the transposed branch of PackedConvWeightsOnednn<kSpatialDim>::prepack (aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp, torch 2.13.0): weight.reshape(dims_giohw).permute(perms).clone(), then exp_wgt.feed_from(wgt, /*transposed=*/true).

Symptoms:
onednn engine: ConvTranspose1d/2d/3d, any x86-64 CPU, any ONEDNN_MAX_CPU_ISA.
x86 engine (the default): CPUs with AVX512-VNNI, symmetric weight, no output_padding (should_use_onednn_quant, OnednnUtils.h).
"""
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch.ao.nn.quantized is deprecated
print("torch", torch.__version__)
w = torch.tensor([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]]).reshape(2, 3, 1, 1)  # (C_in, C_out, kH, kW)
x = torch.quantize_per_tensor(torch.eye(2).reshape(2, 2, 1, 1), 1.0, 0, torch.quint8)  # impulses on channels 0, 1
wrong = False
for engine in ("onednn", "x86", "fbgemm"):
    torch.backends.quantized.engine = engine
    m = nnq.ConvTranspose2d(2, 3, 1, bias=False)
    m.set_weight_bias(torch.quantize_per_tensor(w, 1.0, 0, torch.qint8), None)
    m.scale, m.zero_point = 1.0, 0
    y = m(x).int_repr().reshape(2, 3).tolist()
    print(f"{engine:6s}: {y[0]} / {y[1]}, expected [10, 20, 30] / [40, 50, 60]")
    wrong |= engine == "onednn" and y != [[10, 20, 30], [40, 50, 60]]
sys.exit(1 if wrong else 0)
