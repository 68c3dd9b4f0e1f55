"""PyTorch's bfloat16 CPU convolution flushes subnormal inputs and results to zero where oneDNN uses AVX512_BF16

Measures: torch.nn.functional.conv2d in bfloat16 on a subnormal input with normal products (x = 2^-128, w = 16)
and on normal inputs whose products and result are subnormal (x = w = 2^-65), against the exact values and the
same convolution in float32 (kept). Exit 1 where bfloat16 gives zero. oneDNN's avx512_core_bf16 kernels use
VDPBF16PS and VCVTNEPS2BF16, which the Intel SDM documents as treating denormal inputs as zero and flushing
denormal outputs, without consulting MXCSR; with ONEDNN_MAX_CPU_ISA=AVX512_CORE (no bf16 instructions) the
result is exact.
"""
import sys

import torch

print("torch", torch.__version__, "cpu capability", torch.backends.cpu.get_cpu_capability())
flushed = False
for what, ex, ew in (("subnormal input, normal result", -128, 4), ("normal inputs, subnormal result", -65, -65)):
    x = torch.full((1, 4, 5, 5), 2.0 ** ex, dtype=torch.bfloat16)
    w = torch.full((1, 4, 3, 3), 2.0 ** ew, dtype=torch.bfloat16)
    got = torch.nn.functional.conv2d(x, w)[0, 0, 0, 0].item()
    f32 = torch.nn.functional.conv2d(x.float(), w.float())[0, 0, 0, 0].item()
    want = 36 * 2.0 ** ex * 2.0 ** ew
    print(f"bfloat16 {what}: {got!r}; float32 {f32!r}; exact {want!r}")
    flushed |= got == 0.0
sys.exit(1 if flushed else 0)
