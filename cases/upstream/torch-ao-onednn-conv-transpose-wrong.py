"""Quantized ConvTranspose under the onednn engine mixes up weight channels when C_in/groups and C_out/groups differ

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: none
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "quantized ConvTranspose onednn wrong result", "onednn conv_transpose2d quantized incorrect", "qconv transpose onednn weight permute"

What happens: torch.ao.nn.quantized ConvTranspose1d/2d/3d under torch.backends.quantized.engine = "onednn" return
wrong values whenever the per-group channel counts C_in/groups and C_out/groups are both above 1 and differ. A unit
impulse through a 2 -> 3 channel 1x1 kernel with weight w[ci, co] = 10, 20, 30 / 40, 50, 60 returns [10, 50, 40] for
an impulse on input channel 0 and [30, 20, 60] on channel 1 (expected [10, 20, 30] and [40, 50, 60]): the spatial taps
are right, the channels are mixed. With random int8 weights and full-range uint8 inputs (3x3 kernel, 5x5 input),
against the exact integer result: 4 -> 6 is 168 units of y off, 4 -> 6 groups 2 (2 -> 3 per group) 191, 6 -> 4 groups
2 115, 8 -> 12 groups 4 110; 4 -> 4, 8 -> 8 groups 2, 4 -> 8 groups 4 (1 -> 2 per group), 3 -> 6 groups 3 and 6 -> 3
groups 3 are exact. fbgemm and qnnpack are exact on the same modules. The same at every ONEDNN_MAX_CPU_ISA measured
(AMX on Sapphire Rapids, AVX512-VNNI, AVX2). The x86 engine returns the same wrong values where it sends the conv to
oneDNN (AVX512-VNNI CPUs, symmetric weights, no output_padding; a separate report).

Expected: ConvTranspose semantics with weight (C_in, C_out/groups, *k): output channel co of group g sums w[ci, co] *
x[ci] over the input channels ci of group g. The reference is exact integer arithmetic: acc = conv_transpose(x - x_zp,
w_int, groups), y = clip(round(acc * x_scale * w_scale / y_scale) + y_zp, 0, 255); the result must be within one unit.

Mechanism: PackedConvWeightsOnednn<k>::prepack, transposed branch (aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp):
weight_copy = weight.reshape(dims_giohw).permute(perms).clone(); clone() keeps the permuted strides, so
weight_copy.data_ptr() still holds the (C_in, C_out/g) layout, while the ideep tensor built on that pointer is
described as plain [g,] o, i (tag oihw/goihw), and feed_from(wgt, transposed) swaps the two dims again. The impulse
probe matches exactly that: each (C_in/g x C_out/g) block is read as if reshaped to (C_out/g x C_in/g) and then
transposed, which is the identity only for a square block or a vector (ONEDNN_VERBOSE shows the weight reorder
described as 6x4x3x3 for a (4, 6, 3, 3) weight). Making the copy contiguous in the permuted order
(clone(at::MemoryFormat::Contiguous) or .contiguous()) should fix it (not tried).

Host: any CPU with the onednn quantized engine (x86-64).
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
        offs = {e: np.abs(y - exact) for e, y in ys.items()}
        i = np.unravel_index(np.argmax(offs["onednn"]), exact.shape)
        shape = "square" if cin == cout else "vector" if min(cin, cout) == groups else "non-square"
        print(f"ConvTranspose2d {cin} -> {cout}, groups {groups} ({cin // groups} -> {cout // groups} per group, "
              f"{shape}): max |y - exact| " + ", ".join(f"{e} {o.max():.0f}" for e, o in offs.items())
              + f" units; onednn worst at {tuple(int(v) for v in i)}: {ys['onednn'][i]} for {exact[i]:.0f}")
        wrong += offs["onednn"].max() > 1
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
