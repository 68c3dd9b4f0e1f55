"""Quantized ConvTranspose2d under the onednn engine against exact integer results.

Measures: unit impulses through a 2 -> 3 1x1 kernel on onednn, fbgemm and qnnpack; random int8 weights and full-range
uint8 inputs for square, vector and non-square per-group channel blocks (max units of y off each engine); and whether
the onednn output equals the same convolution with each (C_in/g x C_out/g) weight block transposed twice, each time
read as a C_out/g x C_in/g matrix (the measured weight mix-up). Exit 1 when onednn is off by more than one unit.
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


def twice_transposed(w: np.ndarray, groups: int) -> np.ndarray:
    """Each (C_in/g, C_out/g) block of w transposed twice, each time read as a (C_out/g, C_in/g) matrix."""
    cin_g, cout_g = w.shape[0] // groups, w.shape[1]
    blocks = []
    for g in range(groups):
        b = w[g * cin_g:(g + 1) * cin_g]
        for _ in range(2):
            b = b.reshape(cout_g, cin_g, *w.shape[2:]).swapaxes(0, 1)
        blocks.append(b)
    return np.concatenate(blocks)


def run(engine: str, x: np.ndarray, w: np.ndarray, groups: int, sy: float) -> np.ndarray:
    torch.backends.quantized.engine = engine
    m = nnq.ConvTranspose2d(x.shape[1], w.shape[1] * groups, w.shape[2:], groups=groups, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), SW, 0), None)
    m.scale, m.zero_point = sy, ZY
    return m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), SX, ZX)).int_repr().numpy().astype(np.int64)


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}")
    if "onednn" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the onednn quantized engine is not built in")
        return 0
    engines = [e for e in ("onednn", "fbgemm", "qnnpack") if e in torch.backends.quantized.supported_engines]
    # 1. Unit impulses through a 2 -> 3 channel 1x1 kernel, y_scale = x_scale * w_scale: y = w[ci, :] exactly.
    w = (np.arange(1, 7, dtype=np.int8) * 10).reshape(2, 3, 1, 1)
    for engine in engines:
        rows = []
        for ci in range(2):
            x = np.full((1, 2, 1, 1), ZX, np.uint8)
            x[0, ci] += 1
            rows.append((run(engine, x, w, 1, SX * SW).ravel() - ZY).tolist())
        print(f"{engine:8s} 2 -> 3, 1x1, impulse on input channel 0 / 1: {rows[0]} / {rows[1]} "
              f"(expected {w[0].ravel().tolist()} / {w[1].ravel().tolist()})")
    # 2. Random weights, full-range inputs, 3x3 kernel.
    rng = np.random.default_rng(0)
    wrong = 0
    for cin, cout, groups in [(4, 6, 1), (4, 6, 2), (6, 4, 2), (4, 4, 1), (3, 6, 3), (6, 3, 3)]:
        x = rng.integers(0, 256, (1, cin, 5, 5)).astype(np.uint8)
        w = rng.integers(-20, 21, (cin, cout // groups, 3, 3)).astype(np.int8)
        acc = transposed_int(x.astype(np.int64) - ZX, w.astype(np.int64), groups)
        sy = float(np.abs(acc).max() * SX * SW / 120)
        exact = np.clip(np.rint(acc * SX * SW / sy) + ZY, 0, 255)
        ys = {e: run(e, x, w, groups, sy) for e in engines}
        mixed = transposed_int(x.astype(np.int64) - ZX, twice_transposed(w, groups).astype(np.int64), groups)
        as_mixed = bool((np.abs(ys["onednn"] - np.clip(np.rint(mixed * SX * SW / sy) + ZY, 0, 255)) <= 1).all())
        offs = {e: np.abs(y - exact) for e, y in ys.items()}
        i = np.unravel_index(np.argmax(offs["onednn"]), exact.shape)
        shape = "square" if cin == cout else "vector" if min(cin, cout) == groups else "non-square"
        print(f"ConvTranspose2d {cin} -> {cout}, groups {groups} ({cin // groups} -> {cout // groups} per group, "
              f"{shape}): max |y - exact| " + ", ".join(f"{e} {o.max():.0f}" for e, o in offs.items())
              + f" units; onednn worst at {tuple(int(v) for v in i)}: {ys['onednn'][i]} for {exact[i]:.0f}; "
              f"onednn equals the twice-transposed weight's result: {as_mixed}")
        wrong += offs["onednn"].max() > 1
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
