"""CPU conv_transpose with an output length of 0: the native kernel raises, the oneDNN kernels return an empty tensor

Kind: invalid-accepted
Ask: Please make the CPU kernels agree on an output length of 0 (all raise, as the native kernel does, or all return the empty tensor, as oneDNN and, since PR #171888, CUDA do) and document the rule.

What happens: On CPU the outcome depends on which kernel runs. conv_transpose2d of a 3x3 input, kernel 2, padding (2, 0) (output height (3 - 1) + 2 - 4 = 0): float32 with groups 1 (the native slow_conv_transpose2d) raises "Output size is too small"; float32 with groups 2, and bfloat16 on CPUs with AVX-512 (oneDNN), return a (1, 2, 0, 4) tensor. Under ONEDNN_MAX_CPU_ISA=AVX2 bfloat16 leaves oneDNN and raises again, so the same call raises or returns by CPU. torch.compile returns the empty tensor for 2-D/3-D and refuses 1-D; ONNX Runtime refuses the ONNX export.

Expected: One documented answer for an output length of 0 (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose2d.html gives the length formula, not the rule).

Mechanism: The length check is in the native kernels' shape check (slow_conv_transpose2d_shape_check, NaiveConvolutionTranspose2d.cpp, torch 2.13.0); the oneDNN path (mkldnn_convolution_transpose, reached through _convolution's backend selection) sizes the output without it.
"""
import torch

print("torch", torch.__version__)
outcomes = set()
for dtype, groups in ((torch.float32, 1), (torch.float32, 2), (torch.bfloat16, 1)):
    x, w = torch.randn(1, 2, 3, 3, dtype=dtype), torch.randn(2, 2 // groups, 2, 2, dtype=dtype)
    try:
        y = torch.nn.functional.conv_transpose2d(x, w, groups=groups, padding=(2, 0))  # output height 0
        print(f"{dtype}, groups {groups}: returns shape {tuple(y.shape)}")
        outcomes.add("returns")
    except RuntimeError as e:
        print(f"{dtype}, groups {groups}: raises {str(e).splitlines()[0][-60:]!r}")
        outcomes.add("raises")
raise SystemExit(1 if len(outcomes) > 1 else 0)
