"""Inductor freezing folds a per-channel mul/div after ConvTranspose into the weight along the input-channel axis

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/pull/105048 (inductor: conv + binary folding for the freezing path, which added the pass)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "binary_folding conv_transpose", "inductor freezing ConvTranspose mul wrong", "freezing conv transpose batch norm fold wrong"

What happens: with torch._inductor.config.freezing = True, a per-output-channel multiply (or divide, or a BatchNorm in
eval mode) after a ConvTranspose{1,2,3}d with C_in == C_out is folded into the conv weight along weight dim 0. For a
transposed conv that dim is C_in (the weight is (C_in, C_out/groups, *k)), so the constant scales the input channels:
ConvTranspose2d(4, 4, 3, bias=False) followed by * [1, 2, 3, 4] per channel returns conv_transpose(x * s, w) instead
of conv_transpose(x, w) * s, silently, with errors of the output's own magnitude (max |error| 2.44 for outputs up to
4.64 here; the result equals conv_transpose(x * s, w) to 3e-7). Exact for depthwise (groups == C) only by coincidence;
freezing=False and eager are right. Where C_in != C_out the shapes disagree and compilation fails instead (reported
separately). The pass is device-independent: the same on CUDA (H200, torch 2.11.0+cu130).

Expected: the compiled module returns what eager returns: conv_transpose(x, w) with output channel c scaled by s[c];
the script checks against a float64 NumPy transposed convolution.

Mechanism: torch/_inductor/fx_passes/binary_folding.py: _check_conv_and_broadcast_op / _op_not_broadcasting_with_conv
match the constant's length against weight.shape[0], and _create_new_conv_node reshapes it to [weight.size(0), 1, ...]
and multiplies the weight (and builds a bias of weight.size(0) elements), without looking at the convolution's
transposed flag (aten.convolution's 7th argument), for which the output channels are weight dim 1 (times groups).

Host: any (the pass runs for every device; shown here on CPU).
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch._inductor.config as inductor_config

warnings.filterwarnings("ignore")


class ScaledTranspose(torch.nn.Module):
    def __init__(self, scale: torch.Tensor) -> None:
        super().__init__()
        self.conv = torch.nn.ConvTranspose2d(4, 4, 3, bias=False)  # weight (C_in, C_out, kH, kW)
        self.register_buffer("s", scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) * self.s.view(1, -1, 1, 1)


def transposed(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """float64 conv_transpose2d, stride 1, no padding: x (N, C_in, H, W), w (C_in, C_out, kH, kW)."""
    n, _, h, wd = x.shape
    y = np.zeros((n, w.shape[1], h + w.shape[2] - 1, wd + w.shape[3] - 1))
    for i, j in itertools.product(range(w.shape[2]), range(w.shape[3])):
        y[:, :, i:i + h, j:j + wd] += np.einsum("nchw,co->nohw", x, w[:, :, i, j])
    return y


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    torch.manual_seed(0)
    s = torch.tensor([1.0, 2.0, 3.0, 4.0])
    m = ScaledTranspose(s).eval()
    x = torch.randn(1, 4, 5, 5)
    xd, wd, sd = x.double().numpy(), m.conv.weight.detach().double().numpy(), s.double().numpy()
    expected = transposed(xd, wd) * sd.reshape(1, -1, 1, 1)
    wrong_axis = transposed(xd * sd.reshape(1, -1, 1, 1), wd)  # the constant applied to input channels instead
    with torch.no_grad():
        eager = m(x).double().numpy()
        try:
            with inductor_config.patch(freezing=True):
                y = torch.compile(m, backend="inductor", fullgraph=True)(x).double().numpy()
        except Exception as exc:  # noqa: BLE001 - a compile failure is a result too
            print(f"freezing=True: {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
            return 1
    err = np.abs(y - expected)
    i = np.unravel_index(np.argmax(err), err.shape)
    print(f"ConvTranspose2d(4, 4, 3) * s per output channel, s = {s.tolist()}: output {y.shape}")
    print(f"  eager: max |y - float64 reference| = {np.abs(eager - expected).max():.2e}")
    print(f"  inductor freezing=True: max |y - float64 reference| = {err.max():.3g} at {tuple(int(v) for v in i)} "
          f"(y {y[i]:.5g}, expected {expected[i]:.5g}; max |expected| {np.abs(expected).max():.3g}); "
          f"max |y - conv_transpose(x * s, w)| = {np.abs(y - wrong_axis).max():.2e}")
    return 1 if err.max() > 1e-4 * np.abs(expected).max() else 0


if __name__ == "__main__":
    sys.exit(main())
