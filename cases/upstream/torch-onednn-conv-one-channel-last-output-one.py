"""CPU float32 conv2d/conv3d with one input channel in channels_last is wrong when the last output length is 1 after a stride > 1

Kind: wrong-value
Ask: a fix: keep these convolutions off oneDNN's brg_conv_fwd:avx512_core in ConvParams::use_mkldnn (or take a oneDNN with the fix), and report the kernel to oneDNN.

What happens: On AVX-512 CPUs (AMD EPYC Zen 4), `F.conv2d` of a 2x1x4x1 channels_last input, 2x1x4x2 kernel, stride (1, 4), padding 1 (output 3x1) returns 8 of 12 outputs wrong by up to 9 on small integers, where float32 is exact. Of 3,000 random one-channel channels_last shapes, all 77 wrong ones have a last stride > 1, last output length 1, last kernel > 1, and stride 1 with several outputs on the axis before. Two input channels, contiguous inputs, ONEDNN_MAX_CPU_ISA=AVX2 and mkldnn disabled are right; torch.compile and bfloat16 are wrong too.

Expected: the float64 result (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv2d.html).

Mechanism: ONEDNN_VERBOSE: brg_conv_fwd:avx512_core (oneDNN v3.12.0; mb2_ic1oc2_ih4oh3kh4sh1_iw1ow1kw2sw4), also for two channels. oneDNN's C API alone is wrong the same way (v3.6.2, v3.13.2): `src/cpu/x64/jit_brgemm_conv_utils.cpp` keeps os blocking for ow == 1 with stride_h == 1.

Symptoms:
eager torch: one input channel, channels_last, float32 and bfloat16 conv2d/conv3d.
torch.compile (inductor with freezing): the same shapes with a channels_first input, which inductor hands the kernel as NHWC.
"""
import sys

import torch
import torch.nn.functional as F

print("torch", torch.__version__, "CPU capability:", torch.backends.cpu.get_cpu_capability())
g = torch.Generator().manual_seed(0)
x = torch.randint(-3, 4, (2, 1, 4, 1), generator=g).float().to(memory_format=torch.channels_last)
w = torch.randint(-2, 3, (2, 1, 4, 2), generator=g).float()
got = F.conv2d(x, w, stride=(1, 4), padding=1)  # output width (1 + 2 - 2) // 4 + 1 = 1
want = F.conv2d(x.double(), w.double(), stride=(1, 4), padding=1)  # exact on small integers
print("float64 (exact):", want.flatten().tolist())
print("float32:        ", got.flatten().tolist())
wrong = int((got.double() != want).sum())
print(f"{wrong} of {got.numel()} outputs wrong")
sys.exit(1 if wrong else 0)
