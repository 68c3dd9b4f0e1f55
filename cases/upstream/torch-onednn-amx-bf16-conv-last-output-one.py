"""CPU bfloat16 conv2d/conv3d on AMX is wrong when the last output length is 1 after a last stride > 1 (also conv2d, beyond PR #188426's guard)

Kind: wrong-value
Ask: Please cover conv2d in PR #188426's guard, and report estimate_brgemm_ur's ow == 1 row spacing to oneDNN.

What happens: Adding to this thread: on AMX CPUs, bfloat16 conv3d with batch 2, 3 -> 2 channels, input 4x3x3, kernel 1x1x2, stride (1, 1, 3) is off by 1.87 relative; conv2d too (input 6x1, kernel 3x4, stride (1, 3), padding (1, 3), dilation (1, 2), groups 2: 378x the rounding bound). Right with ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 or AVX2.

Expected: The float32 result within bfloat16 rounding.

Mechanism: In brg_conv_fwd:avx10_1_512_amx, estimate_brgemm_ur (jit_brgemm_conv_utils.cpp, oneDNN v3.12.0) sets LDA *= ext_kw when ow == 1; under os blocking a call's rows are then stride_w * ext_kw * ic apart, not one input row: row 0 is right, later rows read wrong input.

Symptoms:
torch.ao uint8 conv2d/conv3d (onednn, x86): up to 255 off; Zen 5 too (avx512_core_vnni).
OpenVINO 2026.4.1 (its oneDNN fork): bf16 and int8, the same kernel.
conv_transpose3d grad_input, input 5x5x1, stride (1, 3, 2): off by 0.95.
"""
import sys

import torch

amx = torch.cpu._is_amx_tile_supported()
print("torch", torch.__version__, "AMX:", amx)
torch.manual_seed(0)
x, w = torch.randn(2, 3, 4, 3, 3).bfloat16(), torch.randn(2, 3, 1, 1, 2).bfloat16()
y = torch.nn.functional.conv3d(x, w, stride=(1, 1, 3)).float()  # last output length (3 - 2) // 3 + 1 = 1
ref = torch.nn.functional.conv3d(x.float(), w.float(), stride=(1, 1, 3))  # the same inputs in float32
rel = ((y - ref).abs().max() / ref.abs().max()).item()
print(f"bfloat16 conv3d, stride (1, 1, 3): relative error {rel:.3g} against float32 (bfloat16 rounding: below 1e-2)")
if rel > 0.05:
    sys.exit(1)
if not amx:
    print("not shown on this CPU: without AMX oneDNN does not run brg_conv_fwd:avx10_1_512_amx")
sys.exit(0)
