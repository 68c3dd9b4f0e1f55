"""Inductor freezing folds a scalar add after ConvTranspose (C_in != C_out) into a bias of C_in elements: compile error

Measures: ConvTranspose2d(3, 5, 3) + 0.5 compiled with inductor freezing=True against a float64 reference: the compile
error, or the output's error. Exit 1 when compilation fails.
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
