"""Quantized ConvTranspose2d under the x86 engine: routed to oneDNN (AVX512-VNNI CPUs, symmetric weight) or fbgemm.

Measures: the 2 -> 3 1x1 unit-impulse probe and random full-range modules (4 -> 6, 4 -> 6 groups 2, 4 -> 4) with a
symmetric weight (oneDNN where the CPU has AVX512-VNNI) and with weight zero point 1 (fbgemm), in units of y against
exact integer results. Exit 1 when the symmetric-weight module is off by more than one unit; on a CPU without
AVX512-VNNI it prints "not shown on this host" and exits 0.
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
SX, ZX, SW, ZY = 0.01, 128, 0.002, 128


def transposed_int(x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """Exact integer conv_transpose2d (stride 1, no padding): x (N, C_in, H, W), w (C_in, C_out/groups, kH, kW)."""
    n, cin, h, wd = x.shape
    cout_g, kh, kw = w.shape[1:]
    cin_g = cin // groups
    y = np.zeros((n, cout_g * groups, h + kh - 1, wd + kw - 1), np.int64)
    for g, i, j in itertools.product(range(groups), range(kh), range(kw)):
        xs, ws = x[:, g * cin_g:(g + 1) * cin_g], w[g * cin_g:(g + 1) * cin_g, :, i, j]
        y[:, g * cout_g:(g + 1) * cout_g, i:i + h, j:j + wd] += np.einsum("nchw,co->nohw", xs, ws)
    return y


def run(engine: str, x: np.ndarray, w: np.ndarray, groups: int, sy: float, w_zp: int = 0) -> np.ndarray:
    """x86 with the given weight zero point; w_zp = 1 shifts the stored weight so w_int stays the same."""
    torch.backends.quantized.engine = engine
    m = nnq.ConvTranspose2d(x.shape[1], w.shape[1] * groups, w.shape[2:], groups=groups, bias=False)
    stored = torch.from_numpy((w.astype(np.int16) + w_zp).astype(np.int8))
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(stored, SW, w_zp), None)
    m.scale, m.zero_point = sy, ZY
    return m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), SX, ZX)).int_repr().numpy().astype(np.int64)


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}, "
          f"CPU AVX512-VNNI (cpuinfo): {torch.cpu._is_vnni_supported()}")
    if "x86" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the x86 quantized engine is not built in")
        return 0
    # 1. Unit impulses through a 2 -> 3 channel 1x1 kernel, y_scale = x_scale * w_scale: y = w[ci, :] exactly.
    w = (np.arange(1, 7, dtype=np.int8) * 10).reshape(2, 3, 1, 1)
    rows = []
    for ci in range(2):
        x = np.full((1, 2, 1, 1), ZX, np.uint8)
        x[0, ci] += 1
        rows.append((run("x86", x, w, 1, SX * SW).ravel() - ZY).tolist())
    print(f"x86 2 -> 3, 1x1, impulse on input channel 0 / 1: {rows[0]} / {rows[1]} "
          f"(expected {w[0].ravel().tolist()} / {w[1].ravel().tolist()})")
    # 2. Random weights, full-range inputs, 3x3 kernel: symmetric weight (oneDNN on VNNI CPUs) and weight zero
    # point 1 (always fbgemm).
    rng = np.random.default_rng(0)
    wrong = 0
    for cin, cout, groups in [(4, 6, 1), (4, 6, 2), (4, 4, 1)]:
        x = rng.integers(0, 256, (1, cin, 5, 5)).astype(np.uint8)
        w = rng.integers(-20, 21, (cin, cout // groups, 3, 3)).astype(np.int8)
        acc = transposed_int(x.astype(np.int64) - ZX, w.astype(np.int64), groups)
        sy = float(np.abs(acc).max() * SX * SW / 120)
        exact = np.clip(np.rint(acc * SX * SW / sy) + ZY, 0, 255)
        sym = np.abs(run("x86", x, w, groups, sy) - exact).max()
        asym = np.abs(run("x86", x, w, groups, sy, w_zp=1) - exact).max()
        print(f"x86 ConvTranspose2d {cin} -> {cout}, groups {groups}: max |y - exact| {sym:.0f} units with a symmetric "
              f"weight, {asym:.0f} with weight zero point 1 (fbgemm)")
        wrong += sym > 1
    if not wrong and not torch.cpu._is_vnni_supported():
        print("not shown on this host: without AVX512-VNNI the x86 engine runs fbgemm, which is exact")
        return 0
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
