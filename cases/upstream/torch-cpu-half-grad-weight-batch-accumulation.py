"""CPU float16 conv weight gradient sums the batch in float16 when oneDNN's float16 kernels are not used

Kind: wrong-value
Ask: a fix: accumulate the weight gradient over the batch in float32 and round once, as the bfloat16 oneDNN path does.

What happens: On a CPU without AVX512-FP16/AMX-FP16 (here AMD EPYC Zen 4, or any CPU under ONEDNN_MAX_CPU_ISA=AVX2), the float16 weight gradient of `F.conv1d` over a batch of 4096 ones (1 -> 1 channel, kernel 1) is 2048 instead of 4096; float32 gives 4096. Each sample's sum is taken in float32 but added into the float16 gradient, so the batch is summed in float16 and stalls where the float16 spacing exceeds the addend. On random float16 conv and conv_transpose 1-3d gradients with batch >= 2, 80 of 83 differ from the float32 sum rounded once (worst 1.09 float16 ulps); batch 1 is right.

Expected: the batch sum, 4096, which float16 holds exactly: the float32 gradient rounded once to float16, as the oneDNN float16 and bfloat16 paths give (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv1d.html).

Mechanism: aten/src/ATen/native/ConvolutionMM2d.cpp (torch 2.13.0): slow_conv2d_backward_weight_out_cpu_template loops over the batch and calls slow_conv2d_backward_weight_frame, whose cpublas::gemm with beta 1 writes into the scalar_t (Half) grad_weight, rounding after every sample.

Symptoms:
float16 weight gradients with batch >= 2 on CPUs without AVX512-FP16/AMX-FP16: 2048 for 4096 ones.
bfloat16 weight gradients with batch >= 2 without oneDNN's bfloat16 kernels (no AVX-512, or ONEDNN_MAX_CPU_ISA=AVX2): 256 for 4096 ones; with them, 4096.
"""
import os
import sys

os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # no oneDNN float16 kernels, as on any CPU without AVX512-FP16/AMX-FP16
import torch

print("torch", torch.__version__, "| oneDNN float16 kernels:", torch.ops.mkldnn._is_mkldnn_fp16_supported())
x = torch.ones(4096, 1, 1)  # batch 4096, one channel, length 1
grads = {}
for dtype in (torch.float32, torch.float16):
    w = torch.ones(1, 1, 1, dtype=dtype, requires_grad=True)
    torch.nn.functional.conv1d(x.to(dtype), w).sum().backward()
    grads[dtype] = w.grad.item()
    print(f"{dtype!s:13} conv1d weight gradient: {grads[dtype]}")
print("expected 4096 (the batch sum, exact in float16)")
sys.exit(1 if grads[torch.float16] != 4096 else 0)
