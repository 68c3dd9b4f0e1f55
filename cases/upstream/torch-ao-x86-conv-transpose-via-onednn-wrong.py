"""Quantized ConvTranspose under the default x86 engine gives wrong values on AVX512-VNNI CPUs (routed to oneDNN), exact elsewhere

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: none
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "quantized ConvTranspose x86 engine wrong", "onednn conv_transpose2d quantized incorrect", "should_use_onednn_quant"

What happens: torch's default quantized engine "x86" sends a quantized ConvTranspose to oneDNN when cpuinfo reports
AVX512-VNNI, the weight is symmetric, groups <= 100 and output_padding is zero, and to fbgemm otherwise. Through
oneDNN it mixes up weight channels whenever C_in/groups and C_out/groups are both above 1 and differ (the onednn
engine's defect, reported separately): on an AVX-512 VNNI Xeon a 2 -> 3 channel 1x1 kernel with w[ci, co] = 10, 20,
30 / 40, 50, 60 returns [10, 50, 40] / [30, 20, 60] for unit impulses on input channels 0 / 1; with random weights
4 -> 6 is 168 units of y off, 4 -> 6 groups 2 191. The same module with output_padding 1, or with weight zero point 1,
goes to fbgemm and is exact, and on a CPU without AVX512-VNNI (an AVX2-only AMD EPYC) the x86 engine is exact
throughout: the same model gives different results by CPU. ONEDNN_MAX_CPU_ISA=AVX2 caps oneDNN's kernels but not the
routing (cpuinfo), so it changes nothing here.

Expected: ConvTranspose semantics with weight (C_in, C_out/groups, *k), whichever library the x86 engine picks. The
reference is exact integer arithmetic: acc = conv_transpose(x - x_zp, w_int, groups), y = clip(round(acc * x_scale *
w_scale / y_scale) + y_zp, 0, 255); the result must be within one unit.

Mechanism: should_use_onednn_quant (aten/src/ATen/native/quantized/cpu/OnednnUtils.h, called by the x86 prepack in
qconv_prepack.cpp) picks oneDNN; PackedConvWeightsOnednn<k>::prepack then builds weight_copy =
weight.reshape(dims_giohw).permute(perms).clone(), whose clone() keeps the permuted strides, and describes that
memory to ideep as plain oihw/goihw: each (C_in/g x C_out/g) weight block is read as if reshaped to (C_out/g x C_in/g)
and transposed, the identity only for a square block or a vector.

Host: x86 engine on CPUs with AVX512-VNNI (cpuinfo), symmetric weights, no output_padding: where it runs oneDNN.
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
