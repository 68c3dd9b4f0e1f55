"""Compiled depthwise ConvTranspose1d on a channels-last input fails inductor's stride assert where torch runs its own slow transposed conv

Kind: valid-refused
Ask: Please make the FakeTensor conv rule predict the strides the slow transposed-conv kernels return, or have those kernels honour the predicted memory format.

What happens: Without oneDNN kernels for the dtype (bfloat16 under ONEDNN_MAX_CPU_ISA=AVX2 or on AVX2-only CPUs; float32 under torch.backends.mkldnn.flags(enabled=False)), torch.compile of a depthwise ConvTranspose1d(4, 4, 2, groups=4) on an (N, L, C) input moved to (N, C, L), batch 2, length 1, fails: "AssertionError: expected size 4==4, stride 2==1 at dim=1". Eager returns strides (8, 2, 1); FakeTensor predicts (8, 1, 4). Batch 1, a longer input, or an op after the conv are right.

Expected: The compiled module returns what eager returns.

Mechanism: The conv rule in torch/_subclasses/fake_impls.py picks channels-last with torch._C._conv_determine_backend_memory_format, while ATen's slow_conv_transpose2d (torch 2.13.0) returns a contiguous tensor for batch > 1; inductor asserts the fake strides on the graph output. #184026 was the same mismatch on CUDA.

Symptoms:
bfloat16 depthwise ConvTranspose1d on a channels-last input of length 1, batch 2, without oneDNN bfloat16 kernels.
float64 grouped Conv1d on an (N, L, C) input of length 1.
Channels-last Conv2d/Conv3d, 1 input channel, several output channels and positions, after a batch change.
Grouped ConvTranspose1d/2d, one input channel per group, 1x1 channels-last input, output_padding >= stride: float32.
"""
import os
os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # no oneDNN bfloat16 kernels: torch runs slow_conv_transpose2d
import torch

print("torch", torch.__version__, "with ONEDNN_MAX_CPU_ISA=AVX2")
m = torch.nn.ConvTranspose1d(4, 4, 2, groups=4, bias=False).to(torch.bfloat16).eval()  # depthwise
x = torch.randn(2, 1, 4, dtype=torch.bfloat16).movedim(-1, 1)  # (N, L, C) data seen as (N, C, L), length 1
with torch.no_grad():
    eager = m(x)
    try:
        y = torch.compile(m)(x)
        print(f"compiled: max |compiled - eager| = {(y.float() - eager.float()).abs().max().item()}")
        failed = False
    except AssertionError as e:
        print(f"eager output strides {eager.stride()}; compiled raises AssertionError: {str(e).splitlines()[0][:90]}")
        failed = True
raise SystemExit(1 if failed else 0)
