"""Inductor freezing on CPU fails to compile a float64 Conv2d/Conv3d/ConvTranspose2d/3d (mkldnn weight prepack)

Measures: float64 Conv2d(4, 6, 3) compiled with inductor freezing=True and freezing=False against a float64 reference:
the compile error, or the output's error. Exit 1 when the frozen compile fails.
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
