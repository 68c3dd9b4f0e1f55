"""Inductor freezing fails to compile a float64 Conv2d/Conv3d/ConvTranspose2d/3d: its mkldnn weight prepack takes float64

Kind: valid-refused
Ask: Please skip the mkldnn weight prepack for float64 convolutions in _is_packable_convolution, as PR #121478 did for linear (#121175).

What happens: With torch._inductor.config.freezing = True, torch.compile of a float64 Conv2d(4, 6, 3) fails: BackendCompilerFailed, "RuntimeError: itensor_view_from_dense expects float/bfloat16/half/int8/fp8 tensor input" (during _reorder_convolution_weight). The same for conv3d and for conv_transpose2d/3d that inductor packs, with or without a following op, either memory format. freezing=False compiles and is right; 1-D convolutions (not packed) and transposed ones inductor does not pack (depthwise, or output_padding >= stride) compile and are right.

Expected: A float64 convolution compiles with freezing as without it, unpacked, as float64 linear layers do since PR #121478.

Mechanism: torch/_inductor/fx_passes/mkldnn_fusion.py (torch 2.13.0): _is_packable_convolution has no dtype check for float64, where _is_packable_linear returns False for it, so the pass inserts mkldnn._convolution_pointwise weight packing that oneDNN cannot hold in float64.
"""
import torch
import torch._inductor.config

print("torch", torch.__version__)
m, x = torch.nn.Conv2d(4, 6, 3).double().eval(), torch.randn(1, 4, 5, 5, dtype=torch.float64)
failed = False
for freezing in (False, True):
    torch._inductor.config.freezing = freezing
    torch._dynamo.reset()
    with torch.no_grad():
        try:
            err = (torch.compile(m)(x) - m(x)).abs().max().item()
            print(f"freezing={freezing}: compiled, max |compiled - eager| = {err:.3g}")
        except Exception as e:  # noqa: BLE001 - the compile failure is the defect
            inner = getattr(e, "inner_exception", e)
            print(f"freezing={freezing}: {type(e).__name__}: {type(inner).__name__}: {str(inner).splitlines()[0][:100]}")
            failed = freezing
raise SystemExit(1 if failed else 0)
