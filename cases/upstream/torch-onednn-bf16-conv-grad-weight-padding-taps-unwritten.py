"""CPU bfloat16 conv weight gradient holds garbage at kernel taps that see only padding (channels_last, stride > 1)

Kind: wrong-value
Ask: a fix: write zeros for those taps in oneDNN's bf16 backward-weights kernel (or keep these shapes off it), and report the kernel to oneDNN.

What happens: On AVX-512 CPUs (AMD EPYC Zen 4), the weight gradient of a bfloat16 `F.conv2d` with a 1x2x1x1 channels_last input, 1x2x3x3 kernel, stride (1, 3), padding 1 holds values from 1e5 to 1e36 at taps (1, 0) and (1, 2), which only ever meet the padding and must be 0; other taps are right. The values change from run to run (unwritten memory): 7 of 20 plain calls, 19 of 40 after freeing a buffer of 7e20s. conv1d and conv3d alike; of 117 random channels_last shapes, the 12 wrong ones all have a last stride > 1 and a last-axis tap that meets only padding. float32, float16, contiguous inputs, stride 1, one input channel and ONEDNN_MAX_CPU_ISA=AVX2 are right, as are grad_input and grad_bias.

Expected: the gradient of the convolution: exactly 0 for a tap that multiplies only padding (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv2d.html).

Mechanism: ONEDNN_VERBOSE: backward_weights by jit_bf16:avx512_core_bf16 (src acdb, mb1_ic2oc1_ih1oh1kh3sh1dh0ph1_iw1ow1kw3sw3dw0pw1), oneDNN v3.12.0; not located further in the kernel (jit_avx512_core_bf16_convolution_bwd_weights_t).
"""
import sys

import torch
import torch.nn.functional as F

print("torch", torch.__version__, "CPU capability:", torch.backends.cpu.get_cpu_capability())
torch.manual_seed(0)
x = torch.randn(1, 1, 1, 2).bfloat16().permute(0, 3, 1, 2).requires_grad_()  # 1x2x1x1, channels_last strides
w = torch.randn(1, 2, 3, 3).bfloat16().requires_grad_()
worst = 0.0
for _ in range(20):
    junk = [torch.full((n,), 7e20) for n in (64, 256, 1024, 4096)]  # freed memory now holds 7e20
    del junk
    y = F.conv2d(x, w, stride=(1, 3), padding=1)  # output 1x1: only the centre column of taps meets x
    (gw,) = torch.autograd.grad(y, [w], torch.ones_like(y))
    worst = max(worst, gw[:, :, 1, [0, 2]].abs().max().item())  # taps that meet padding only: exactly 0
print("grad_weight at the padding-only taps (1, 0) and (1, 2): expected 0, largest seen", worst)
sys.exit(1 if worst else 0)
