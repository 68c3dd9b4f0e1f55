"""CPU float16/bfloat16 ConvTranspose and conv backward add overlapping taps in the half type where torch does not use oneDNN

Kind: wrong-value
Ask: Please accumulate col2im/col2vol and the backward's unfolded accumulation in float, as CUDA's col2im does.

What happens: With torch's own kernels (Symptoms), ConvTranspose1d/2d/3d and Conv1d/2d/3d's grad_input round after every overlapping tap. x = 1, kernel [1, t, ..., t] (9 taps, t a quarter ulp at 1): where all taps overlap the result is 1.0, not 1 + 8t rounded once (bfloat16 1.015625, float16 1.0019531). A 3x3x3 kernel is 6.2 bfloat16 ulps off, 6.45 float16.

Expected: The result within one rounding to the half type, as oneDNN and CUDA give.

Mechanism: slow_conv_transpose2d/3d (NaiveConvolutionTranspose2d.cpp/3d.cpp, torch 2.13.0) round the GEMM's columns to scalar_t, then col2im (im2col.h) / col2vol (vol2col.h) add them with data_im[...] += data_col[...] in scalar_t; the backward's unfolded2d_acc (Unfold2d.cpp) and Unfold3dAccCPU (Unfold3d.cpp) do the same. CUDA's col2im_device (im2col.cuh) accumulates in accT.

Symptoms:
float16 ConvTranspose1d/2d/3d on CPUs without AVX512-FP16.
bfloat16 ConvTranspose1d/2d/3d without oneDNN bfloat16 kernels (AVX2 CPUs, ONEDNN_MAX_CPU_ISA=AVX2).
float16/bfloat16 ConvTranspose with output_padding >= stride on any CPU: torch does not hand it to oneDNN (7 of 96 shapes off).
bfloat16/float16 Conv1d/2d/3d grad_input without oneDNN kernels of that type (Slow2d, Slow3d).
"""
import os
os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # no oneDNN half kernels: torch's own slow_conv_transpose runs
import sys

import torch

print("torch", torch.__version__, "with ONEDNN_MAX_CPU_ISA=AVX2")
wrong = False
for dtype, t in ((torch.bfloat16, 2.0**-9), (torch.float16, 2.0**-12)):  # t: a quarter of an ulp at 1
    x = torch.ones(1, 1, 9, dtype=dtype, requires_grad=True)
    w = torch.tensor([1.0] + [t] * 8, dtype=dtype).reshape(1, 1, 9)
    y = torch.nn.functional.conv_transpose1d(x, w)[0, 0, 8].item()  # the element all 9 taps overlap
    ref = torch.nn.functional.conv_transpose1d(x.float(), w.float())[0, 0, 8].to(dtype).item()
    torch.nn.functional.conv1d(x, w, padding=8).sum().backward()  # grad_input sums the same 9 taps
    g = x.grad[0, 0, 0].item()
    print(f"{dtype}: 1 + 8 * {t} = {ref}; conv_transpose1d gives {y}, conv1d grad_input {g}")
    wrong |= y != ref or g != ref
sys.exit(1 if wrong else 0)
