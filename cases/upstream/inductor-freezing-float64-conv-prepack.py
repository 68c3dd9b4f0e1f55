"""Inductor freezing on CPU fails to compile a float64 Conv2d/Conv3d/ConvTranspose2d/3d (mkldnn weight prepack)

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/121175 (the same for float64 linear, fixed); https://github.com/pytorch/pytorch/issues/98979 (linear prepack dtype, fixed)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "itensor_view_from_dense expects float/bfloat16/half", "inductor freezing float64 conv", "mkldnn weight prepack double"

What happens: with torch._inductor.config.freezing = True on CPU, a float64 Conv2d (also Conv3d, and ConvTranspose2d/3d
that inductor packs) fails to compile: BackendCompilerFailed, "RuntimeError: itensor_view_from_dense expects
float/bfloat16/half/int8/fp8 tensor input" (the dtype printed as Double), with or without an op after it, in either
memory layout. 1-D convs (not prepacked) compile and are right, freezing=False compiles and is right, and eager is
right. A transposed conv inductor does not pack (groups == C_in > 1, or output_padding >= stride) is right too.

Expected: freezing either leaves float64 convs unpacked (oneDNN has no float64 kernels) or packs them for a float64
path, as was done for linear (#121175); the compiled module returns what eager returns. The script checks against a
float64 NumPy convolution.

Mechanism: torch/_inductor/fx_passes/mkldnn_fusion.py: _is_packable_convolution (line 1187 in torch 2.13.0) checks
devices, ranks (4-D/5-D only, hence 1-D convs are spared) and bfloat16/float16 support, but not float64, so the
weight is handed to mkldnn._reorder_convolution_weight, whose itensor_view_from_dense rejects Double;
_is_packable_linear in the same file returns False for float64 (line 1272), the fix made for linear.

Host: CPU with mkldnn (oneDNN) enabled, which is torch's default CPU build.
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch._inductor.config as inductor_config

warnings.filterwarnings("ignore")


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"mkldnn enabled: {torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled}")
    if not (torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled):
        print("not shown on this host: mkldnn is not available, so freezing packs no conv weights")
        return 0
    torch.manual_seed(0)
    m = torch.nn.Conv2d(4, 6, 3, dtype=torch.float64).eval()
    x = torch.randn(1, 4, 5, 5, dtype=torch.float64)
    xd, wd, bd = x.numpy(), m.weight.detach().numpy(), m.bias.detach().numpy()
    expected = np.zeros((1, 6, 3, 3)) + bd.reshape(1, -1, 1, 1)
    for i, j in itertools.product(range(3), range(3)):
        expected += np.einsum("nchw,oc->nohw", xd[:, :, i:i + 3, j:j + 3], wd[:, :, i, j])
    with torch.no_grad():
        print(f"eager: max |y - float64 reference| = {np.abs(m(x).numpy() - expected).max():.2e}")
        try:
            with inductor_config.patch(freezing=True):
                y = torch.compile(m, backend="inductor", fullgraph=True)(x).numpy()
        except Exception as exc:  # noqa: BLE001 - the compile failure is the defect
            text = " ".join(str(exc).split())
            cause = text[text.find("RuntimeError"):][:160] if "RuntimeError" in text else text[:160]
            print(f"inductor freezing=True, float64 Conv2d(4, 6, 3): {type(exc).__name__}: {cause}")
            return 1
    print(f"inductor freezing=True: compiled, max |y - float64 reference| = {np.abs(y - expected).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
