"""bfloat16 conv2d on CPU flushes subnormal inputs and results to zero on AVX512_BF16 CPUs, where float32 conv and bfloat16 matmul keep them

Kind: by-design-undocumented
Ask: Documentation: a line in the CPU numerics notes that bfloat16 convolutions on AVX512_BF16 CPUs treat subnormal inputs and results as zero, whatever torch.set_flush_denormal says.

What happens: On an AMD EPYC (Zen 4, AVX512_BF16), F.conv2d in bfloat16 of x = 2^-128 (a subnormal) with w = 16 over a 4x3x3 window gives 0.0 where the exact result is 36 * 2^-124 = 1.69e-36; x = w = 2^-65 (normal inputs whose products 2^-130 are subnormal; exact sum 2.64e-38) gives 0.0 as well. The same conv in float32 and the bfloat16 matmul x @ w are exact. torch.set_flush_denormal(False) changes nothing; with ONEDNN_MAX_CPU_ISA=AVX512_CORE (no bf16 instructions) the bfloat16 conv is exact.

Expected: the float32 conv's values rounded to bfloat16, as the bfloat16 matmul gives; or a documented statement that bfloat16 convolutions flush subnormals (https://pytorch.org/docs/stable/notes/numerical_accuracy.html mentions denormals only for set_flush_denormal).

Mechanism: the conv runs in oneDNN's jit_bf16:avx512_core_bf16 kernel (src/cpu/x64/jit_avx512_core_bf16_conv_kernel.cpp, oneDNN 3.12), which accumulates with VDPBF16PS and converts with VCVTNEPS2BF16; the Intel SDM states that both treat subnormal inputs as zero and flush subnormal results, without consulting MXCSR.
"""
import sys

import torch

print("torch", torch.__version__, "| CPU capability:", torch.backends.cpu.get_cpu_capability())
x = torch.full((1, 4, 3, 3), 2.0 ** -128)  # subnormal in float32 and in bfloat16
w = torch.full((1, 4, 3, 3), 16.0)
exact = 36 * 2.0 ** -124  # 1.69e-36: a normal value, exact in bfloat16 (2^-119 * 1.125)
f32 = torch.nn.functional.conv2d(x, w).item()
bf16 = torch.nn.functional.conv2d(x.bfloat16(), w.bfloat16()).float().item()
matmul = (x.bfloat16().reshape(1, -1) @ w.bfloat16().reshape(-1, 1)).float().item()
print(f"exact {exact!r} | float32 conv {f32!r} | bfloat16 matmul {matmul!r} | bfloat16 conv {bf16!r}")
sys.exit(1 if bf16 == 0.0 else 0)
