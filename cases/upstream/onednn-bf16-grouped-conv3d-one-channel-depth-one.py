"""[cpu] bf16 brg_conv_fwd leaves outputs unwritten in a grouped 3D convolution with one input channel per group and a padded input depth of 1

Kind: wrong-value
Ask: a fix in brg_conv_fwd:avx512_core_bf16 (or a guard that dispatches these shapes to another implementation).

What happens: On an AVX512_BF16 CPU without AMX (AMD EPYC Zen 4), PyTorch 2.13.0 (oneDNN v3.12.0) runs a bf16 channels_last grouped conv3d as brg_conv_fwd:avx512_core_bf16 and returns 68 of 144 outputs wrong on small integers (exact in bf16): zeros, or whatever the destination held (inf, 2.5e38, changing run to run). Of 142 random shapes with one input channel per group, 2-3 outputs per group, input depth 1 under a depth kernel > 1 and a last kernel > 1, 62 are wrong; 0 of 59 with one output per group, 0 of 30 with two input channels per group, 0 of 54 with input depth 2, 0 of 142 in ncdhw. f32 and ONEDNN_MAX_CPU_ISA=AVX512_CORE are right.

Expected: the f32 convolution of the same bf16 values (https://uxlfoundation.github.io/oneDNN/dev_guide_convolution.html).

Mechanism: not located in src/cpu/x64/jit_brgemm_conv.cpp beyond the implementation name; the outputs left unwritten read input, so it is not the padding-only output block fixed by PR 5944.

Symptoms:
PyTorch: bf16 F.conv3d, channels_last_3d, symmetric padding (torch.compile alike).
OpenVINO 2026.4.1, bf16 precision (brgconv_avx512_bf16): the same shapes.
"""
import os
import sys

os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX512_CORE_BF16"  # the avx512_core_bf16 brgemm kernel on AMX CPUs too
import torch
import torch.nn.functional as F

print("torch", torch.__version__, "CPU capability:", torch.backends.cpu.get_cpu_capability())
g = torch.Generator().manual_seed(0)
x = torch.randint(-3, 4, (1, 2, 1, 2, 4), generator=g).float()  # groups 2, one input channel per group, depth 1
w = torch.randint(-2, 3, (6, 1, 3, 3, 5), generator=g).float()  # three outputs per group
kw = dict(stride=(2, 1, 2), dilation=(1, 3, 1), padding=(2, 5, 2), groups=2)
want = F.conv3d(x.double(), w.double(), **kw)  # exact on small integers
got = F.conv3d(x.bfloat16().to(memory_format=torch.channels_last_3d), w.bfloat16(), **kw).double()
print("float64 (exact), first 8:", want.flatten()[:8].tolist())
print("bfloat16,        first 8:", got.flatten()[:8].tolist())
wrong = int((got != want).sum())
print(f"{wrong} of {got.numel()} outputs wrong, max error {(got - want).abs().max().item()}")
sys.exit(1 if wrong else 0)
