"""Inductor freezing folds a per-channel mul/div after ConvTranspose into the weight along the input-channel axis

Measures: ConvTranspose2d(4, 4, 3) * s per output channel compiled with inductor freezing=True, against a float64
reference and against conv_transpose(x * s, w) (the constant applied to input channels). Exit 1 when the compiled
output is off.
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
