"""CPU bfloat16 conv3d with one input channel in channels_last_3d is wrong when the input depth is 1 and padded

Kind: wrong-value
Ask: a fix: keep these convolutions off oneDNN's brg_conv_fwd:avx512_core_bf16 in ConvParams::use_mkldnn (or take a oneDNN with the fix), and report the kernel to oneDNN.

What happens: On an AVX512_BF16 CPU without AMX (AMD EPYC Zen 4), `F.conv3d` in bfloat16 of a 1x1x1x6x7 channels_last_3d input, 2x1x3x4x2 kernel, stride (1, 2, 1), padding (2, 3, 0) returns 109 of 180 outputs wrong by up to 13 on small integers, which bfloat16 holds exactly. Of 600 random one-channel channels_last_3d shapes with input depth 1, 202 are wrong, all with depth padding in front and a last kernel > 1; 2-4 input channels (569 shapes) and contiguous inputs (597) are right, as are float32, ONEDNN_MAX_CPU_ISA=AVX512_CORE (jit_bf16:avx512_core) and AVX2. TensorFlow and OpenVINO return the same wrong values through the same oneDNN kernel.

Expected: the float64 result (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv3d.html).

Mechanism: ONEDNN_VERBOSE: brg_conv_fwd:avx512_core_bf16 (oneDNN v3.12.0; mb1_ic1oc2_id1od3kd3sd1dd0pd2_ih6oh5kh4sh2dh0ph3_iw7ow6kw2sw1dw0pw0); not located further in oneDNN's source.
"""
import sys

import torch
import torch.nn.functional as F

print("torch", torch.__version__, "CPU capability:", torch.backends.cpu.get_cpu_capability())
g = torch.Generator().manual_seed(0)
x = torch.randint(-3, 4, (1, 1, 1, 6, 7), generator=g).float()  # one channel, input depth 1
w = torch.randint(-2, 3, (2, 1, 3, 4, 2), generator=g).float()
kw = dict(stride=(1, 2, 1), padding=(2, 3, 0))
want = F.conv3d(x.double(), w.double(), **kw)  # exact on small integers
got = F.conv3d(x.bfloat16().to(memory_format=torch.channels_last_3d), w.bfloat16(), **kw).double()
print("float64 (exact), first 8:", want.flatten()[:8].tolist())
print("bfloat16,        first 8:", got.flatten()[:8].tolist())
wrong = int((got != want).sum())
print(f"{wrong} of {got.numel()} outputs wrong, max error {(got - want).abs().max().item()}")
sys.exit(1 if wrong else 0)
