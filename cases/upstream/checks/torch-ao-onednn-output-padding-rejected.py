"""Quantized ConvTranspose with a valid output_padding is refused by the onednn engine ("ONEDNN only supports zero output_padding")

Measures: quantized ConvTranspose2d(4, 6, 3, stride 2, padding 1, output_padding 1) under onednn, fbgemm, x86 and
qnnpack: where it raises, and the units of y off exact integer results where it runs. Exit 1 when onednn raises.
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
CIN, COUT, K, S, P, O, L = 4, 6, 3, 2, 1, 1, 5
SX, ZX, SW, SY, ZY = 0.01, 128, 0.002, 0.02, 128


def transposed_int(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact integer conv_transpose2d with stride S, padding P, output_padding O."""
    n, _, h, wd = x.shape
    full = [(m - 1) * S + K + O for m in (h, wd)]
    y = np.zeros((n, w.shape[1], *full), np.int64)
    for i, j in itertools.product(range(K), range(K)):
        y[:, :, i:i + (h - 1) * S + 1:S, j:j + (wd - 1) * S + 1:S] += np.einsum("nchw,co->nohw", x, w[:, :, i, j])
    return y[:, :, P:full[0] - P, P:full[1] - P]


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}")
    if "onednn" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the onednn quantized engine is not built in")
        return 0
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (1, CIN, L, L)).astype(np.uint8)
    w = rng.integers(-20, 21, (CIN, COUT, K, K)).astype(np.int8)
    exact = np.clip(np.rint(transposed_int(x.astype(np.int64) - ZX, w.astype(np.int64)) * SX * SW / SY) + ZY, 0, 255)
    refused = False
    for engine in ("onednn", "fbgemm", "x86", "qnnpack"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        torch.backends.quantized.engine = engine
        label = f"{engine:8s} ConvTranspose2d {CIN}->{COUT}, kernel {K}, stride {S}, padding {P}, output_padding {O}"
        try:  # the constructor prepacks a default weight already
            m = nnq.ConvTranspose2d(CIN, COUT, K, stride=S, padding=P, output_padding=O, bias=False)
            m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), SW, 0), None)
            m.scale, m.zero_point = SY, ZY
            y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), SX, ZX)).int_repr().numpy()
        except RuntimeError as exc:
            print(f"{label}: raises {str(exc).splitlines()[0][:80]}")
            refused = refused or engine == "onednn"
            continue
        print(f"{label}: output {y.shape} (expected {exact.shape}), max |y - exact| = "
              f"{np.abs(y.astype(np.int64) - exact).max():.0f} units of y")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
