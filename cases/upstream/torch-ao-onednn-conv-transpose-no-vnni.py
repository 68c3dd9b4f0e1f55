"""oneDNN int8 deconvolution without VNNI saturates u8 x s8 pair sums at int16: quantized ConvTranspose under the onednn and x86 engines

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: comment for https://github.com/pytorch/pytorch/issues/46749
Related: https://github.com/pytorch/pytorch/issues/44939 (the same vpmaddubsw saturation in fbgemm, closed as documented: reduce_range); https://oneapi-src.github.io/oneDNN/dev_guide_int8_computations.html (oneDNN documents the saturation on pre-VNNI ISAs)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "onednn quantized conv_transpose saturation", "reduce_range onednn", "vpmaddubsw saturation quantized conv"

What happens: the transposed-conv counterpart of the forward saturation (reported alongside). Where oneDNN runs its
int8 deconvolution without VNNI (ONEDNN_MAX_CPU_ISA=AVX2 here, or a CPU without VNNI), a quantized ConvTranspose2d 2
-> 2, 1x1, x = 255, w = 127, y_scale 1000 (x_scale = w_scale = 1) returns 33 = round(32767 / 1000) for the exact
round(2 * 255 * 127 / 1000) = 65, under the onednn engine and under x86 (which routes it to oneDNN on an AVX512-VNNI
CPU; the cap lowers the kernel, not the routing). Random full-range data, ConvTranspose2d 8 -> 8 groups 2, 3x3: 38
units of y off on 183 of 648 elements (convdiff's case of that shape: 32 units on 195); exact at the default ISA
(avx512_core_vnni) on the same Xeon. Narrow-range activations (7 bits) are exact. Square channel blocks are used on
purpose: the onednn engine's transposed conv also mixes channels when C_in/g and C_out/g differ (a separate report).

Expected: exact int32 accumulation of u8 x s8 products, as the VNNI kernels, fbgemm's VNNI path and qnnpack give; the
script's reference is exact integer arithmetic, y = clip(round(acc * x_scale * w_scale / y_scale) + y_zp, 0, 255).
Where a kernel cannot, the flow should keep activations in 7 bits (reduce_range) for it, or raise (#46749).

Mechanism: oneDNN's pre-VNNI int8 deconvolution (run as a backward-data style convolution; its implementation name is
empty in the verbose log here) computes u8 x s8 with vpmaddubsw into int16, as its forward int8 kernels do.

Host: oneDNN int8 kernels without VNNI: CPUs without AVX512-VNNI/AVX-VNNI/AMX, or ONEDNN_MAX_CPU_ISA=AVX2 (or
AVX512_CORE) anywhere.
"""
import ctypes
import os
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules


def onednn_log(fn):
    """Run fn with oneDNN's verbose log on; return (result, log). oneDNN prints with C stdio to fd 1."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
                result = fn()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return result, tmp.read().decode(errors="replace")


def kernels(log: str) -> list[str]:
    """The implementation names of the (de)convolution primitives executed in a oneDNN verbose log."""
    out = []
    for line in log.splitlines():
        f = line.split(",")
        if "exec" in f and ("convolution" in f or "deconvolution" in f):
            kind = "convolution" if "convolution" in f else "deconvolution"
            out.append(f[f.index(kind) + 1] or f"{kind} (name not logged)")
    return out


def quantized(module, engine: str, cin: int, cout: int, k: int, w: np.ndarray, x: np.ndarray, sx: float, zx: int,
              sw: float, sy: float, zy: int, groups: int = 1):
    """Build the torch.ao quantized module under `engine` and run it; returns (y as int64, oneDNN kernels)."""
    torch.backends.quantized.engine = engine
    m = module(cin, cout, k, groups=groups, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0), None)
    m.scale, m.zero_point = sy, zy
    xq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)
    y, log = onednn_log(lambda: m(xq))
    return y.int_repr().numpy().astype(np.int64), kernels(log)


def exact_transposed(x: np.ndarray, w: np.ndarray, zx: int, groups: int) -> np.ndarray:
    """Exact integer conv_transpose2d (stride 1, no padding): x (N, C_in, H, W) u8, w (C_in, C_out/g, kH, kW) s8."""
    n, cin, h, wd = x.shape
    cout_g, kh, kw = w.shape[1:]
    cin_g = cin // groups
    xs = x.astype(np.int64) - zx
    acc = np.zeros((n, cout_g * groups, h + kh - 1, wd + kw - 1), np.int64)
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                acc[:, g * cout_g:(g + 1) * cout_g, i:i + h, j:j + wd] += np.einsum(
                    "nchw,co->nohw", xs[:, g * cin_g:(g + 1) * cin_g], w[g * cin_g:(g + 1) * cin_g, :, i, j].astype(np.int64))
    return acc


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}, "
          f"CPU AVX512-VNNI (cpuinfo): {torch.cpu._is_vnni_supported()}")
    if "onednn" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the onednn quantized engine is not built in")
        return 0
    wrong = 0
    # The ISA oneDNN runs int8 kernels with here, read from a forward conv's verbose log.
    _, ks = quantized(nnq.Conv2d, "onednn", 2, 2, 1, np.ones((2, 2, 1, 1), np.int8), np.ones((1, 2, 3, 3), np.uint8),
                      1.0, 0, 1.0, 1.0, 0)
    isa = ks[0].rpartition(":")[2] if ks else "unknown"
    print(f"oneDNN int8 convolution kernel on this host: {ks[:1]}")
    # 1. Two products of 255 * 127 in one output: exact 64770 -> 65; int16-saturated 32767 -> 33.
    x = np.full((1, 2, 3, 3), 255, np.uint8)
    w = np.full((2, 2, 1, 1), 127, np.int8)
    for engine in ("onednn", "x86"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        y, _ = quantized(nnq.ConvTranspose2d, engine, 2, 2, 1, w, x, 1.0, 0, 1.0, 1000.0, 0)
        print(f"{engine:7s} ConvTranspose2d 2 -> 2, 1x1, x = 255, w = 127, y_scale 1000: y = "
              f"{sorted(set(y.ravel().tolist()))}, exact 65 (int16-saturated: 33)")
        wrong += int(np.abs(y - 65).max() > 1)
    # 2. Random full-range data, 8 -> 8 groups 2 (square 4 -> 4 blocks).
    rng = np.random.default_rng(0)
    cin, cout, groups, zx, sx, sw = 8, 8, 2, 128, 0.01, 0.002
    x = rng.integers(0, 256, (1, cin, 7, 7)).astype(np.uint8)
    w = rng.integers(-127, 128, (cin, cout // groups, 3, 3)).astype(np.int8)
    acc = exact_transposed(x, w, zx, groups)
    sy = float(np.float32((acc.max() - min(acc.min(), 0)) * sx * sw / 255))
    zy = int(np.clip(np.rint(-min(acc.min(), 0) * sx * sw / sy), 0, 255))
    exact = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
    y, _ = quantized(nnq.ConvTranspose2d, "onednn", cin, cout, 3, w, x, sx, zx, sw, sy, zy, groups)
    off = np.abs(y - exact)
    print(f"onednn  ConvTranspose2d {cin} -> {cout}, groups {groups}, 3x3, random full-range u8 / s8: max |y - exact| = "
          f"{off.max():.0f} units of y on {int((off > 1).sum())}/{off.size} elements")
    wrong += int(off.max() > 1)
    if not wrong and ("vnni" in isa or "amx" in isa):
        print(f"not shown on this host: oneDNN runs int8 kernels with {isa} (VNNI: exact int32 sums)")
        return 0
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
