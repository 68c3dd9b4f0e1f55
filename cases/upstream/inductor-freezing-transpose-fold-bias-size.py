"""Inductor freezing folds a scalar add after ConvTranspose (C_in != C_out) into a bias of C_in elements: compile error

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/pull/105048 (inductor: conv + binary folding for the freezing path, which added the pass)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "binary_folding conv_transpose bias", "freezing ConvTranspose expected bias to be 1-dimensional", "inductor freezing conv transpose add scalar"

What happens: with torch._inductor.config.freezing = True, ConvTranspose2d(3, 5, 3, bias=False) followed by "+ 0.5"
fails to compile: BackendCompilerFailed, "RuntimeError: Given transposed=1, weight of size [3, 5, 3, 3], expected bias
to be 1-dimensional with 5 elements, but got bias of size [3] instead". The same for a scalar multiply after a
transposed conv with a bias, and for any per-channel add (shift, BatchNorm) after one with C_out == 1 < C_in ("The
size of tensor a (C_out) must match the size of tensor b (C_in)"). freezing=False compiles and is right, as is eager.

Expected: the compiled module returns what eager returns, conv_transpose(x, w) + 0.5; the script checks against a
float64 NumPy transposed convolution.

Mechanism: torch/_inductor/fx_passes/binary_folding.py, _create_new_conv_node: for add/sub it builds the new bias with
resize_scalar_or_tensor_to_shape(graph, other, (weight.size(0),), ...), i.e. C_in elements for a transposed conv
(weight (C_in, C_out/groups, *k)), without looking at the convolution's transposed flag; the same weight.size(0) is
used for mul/div.

Host: any (the pass runs for every device; shown here on CPU).
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch._inductor.config as inductor_config

warnings.filterwarnings("ignore")


class ShiftedTranspose(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.ConvTranspose2d(3, 5, 3, bias=False)  # weight (C_in=3, C_out=5, 3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) + 0.5


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    torch.manual_seed(0)
    m, x = ShiftedTranspose().eval(), torch.randn(1, 3, 5, 5)
    xd, wd = x.double().numpy(), m.conv.weight.detach().double().numpy()
    expected = np.full((1, 5, 7, 7), 0.5)
    for i, j in itertools.product(range(3), range(3)):
        expected[:, :, i:i + 5, j:j + 5] += np.einsum("nchw,co->nohw", xd, wd[:, :, i, j])
    with torch.no_grad():
        print(f"eager: max |y - float64 reference| = {np.abs(m(x).double().numpy() - expected).max():.2e}")
        try:
            with inductor_config.patch(freezing=True):
                y = torch.compile(m, backend="inductor", fullgraph=True)(x).double().numpy()
        except Exception as exc:  # noqa: BLE001 - the compile failure is the defect
            text = " ".join(str(exc).split())
            cause = text[text.find("RuntimeError"):][:200] if "RuntimeError" in text else text[:200]
            print(f"inductor freezing=True: {type(exc).__name__}: {cause}")
            return 1
    print(f"inductor freezing=True: compiled, max |y - float64 reference| = {np.abs(y - expected).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
