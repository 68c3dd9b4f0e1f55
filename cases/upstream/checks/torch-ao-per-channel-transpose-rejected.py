"""Per-channel quantized ConvTranspose is refused by the fbgemm, x86 and onednn prepacks, while qnnpack runs it exactly

Measures: ConvTranspose2d 4 -> 6 with an int8 weight quantized per channel on axis 1 (the output channels) under
fbgemm, x86, onednn and qnnpack: the error each raises, or the units of y off exact integer results. Exit 1 when
fbgemm, x86 or onednn raises.
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
CIN, COUT, K, L = 4, 6, 3, 5
SX, ZX, SY, ZY = 0.01, 128, 0.05, 128


def transposed_int(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact integer conv_transpose2d (stride 1, no padding) of x (N, C_in, H, W) with w (C_in, C_out, kH, kW)."""
    n, _, h, wd = x.shape
    y = np.zeros((n, w.shape[1], h + w.shape[2] - 1, wd + w.shape[3] - 1), np.int64)
    for i, j in itertools.product(range(w.shape[2]), range(w.shape[3])):
        y[:, :, i:i + h, j:j + wd] += np.einsum("nchw,co->nohw", x, w[:, :, i, j])
    return y


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}")
    rng = np.random.default_rng(0)
    w = rng.integers(-20, 21, (CIN, COUT, K, K)).astype(np.int8)
    x = rng.integers(0, 256, (1, CIN, L, L)).astype(np.uint8)
    scales = np.linspace(0.001, 0.003, COUT)
    acc = transposed_int(x.astype(np.int64) - ZX, w.astype(np.int64))
    exact = np.clip(np.rint(acc * SX * scales.reshape(1, -1, 1, 1) / SY) + ZY, 0, 255)
    refused = []
    for engine in ("fbgemm", "x86", "onednn", "qnnpack"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        torch.backends.quantized.engine = engine
        wq = torch._make_per_channel_quantized_tensor(torch.from_numpy(w), torch.from_numpy(scales),
                                                      torch.zeros(COUT, dtype=torch.int64), 1)
        m = nnq.ConvTranspose2d(CIN, COUT, K, bias=False)
        try:
            m.set_weight_bias(wq, None)
            m.scale, m.zero_point = SY, ZY
            y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), SX, ZX)).int_repr().numpy()
        except RuntimeError as exc:
            print(f"{engine:8s} ConvTranspose2d {CIN}->{COUT}, per-channel weight (axis 1): raises "
                  f"{str(exc).splitlines()[0][:90]}")
            if engine != "qnnpack":
                refused.append(engine)
            continue
        off = np.abs(y.astype(np.int64) - exact)
        print(f"{engine:8s} ConvTranspose2d {CIN}->{COUT}, per-channel weight (axis 1): output {y.shape}, "
              f"max |y - exact| = {off.max():.0f} units of y")
    if not refused and "fbgemm" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: none of the fbgemm, x86, onednn engines is built in")
        return 0
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
