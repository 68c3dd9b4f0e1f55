"""[cpu] brgemm convolution leaves outputs unwritten in a 3D convolution of input depth 1: the rewritten weights drop the depth kernel index

Kind: wrong-value
Ask: a fix in maybe_conv_weights (or keep 3D shapes whose depth kernel is > 1 off converted weights).

What happens: PyTorch 2.13.0 (oneDNN v3.12.0) runs this bf16 conv3d (one input channel per group, input depth 1, depth kernel 3) as brg_conv_fwd:avx512_core_bf16: 68 of 144 outputs wrong, exactly those reading the input through group 0's depth tap 2 or any group-1 tap, as if those weights were zero (or garbage). The AMX kernel too, with 3 or 5 channels per group.

Expected: the f32 convolution of the same bf16 values (https://uxlfoundation.github.io/oneDNN/dev_guide_convolution.html).

Mechanism: maybe_conv_weights (src/cpu/x64/jit_brgemm_conv.cpp), converting weights for the kw-folded reduction (relo wi, used in 3D only at input depth 1), writes one slice per (group, oc block, kh), no kd in its offsets; the kernel reads slice ((g*nb_oc + ocb)*KD + kd)*KH + kh, so taps with (g*nb_oc + ocb)*KD + kd >= groups*nb_oc read unwritten scratchpad. Unchanged on main.

Symptoms:
PyTorch: bf16 F.conv3d, grouped or not (torch.compile alike).
PyTorch torch.ao (onednn, x86): uint8 conv3d on AMX and AVX512-VNNI.
TensorFlow 2.21.0: bf16 Conv3D.
OpenVINO 2026.4.1: int8 QDQ, bf16 Conv3D.
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
