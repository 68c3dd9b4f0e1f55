"""oneDNN int8 deconvolution without VNNI saturates u8 x s8 pair sums at int16: quantized ConvTranspose under the onednn and x86 engines

Measures: ConvTranspose2d 2 -> 2, 1x1, x = 255, w = 127, y_scale 1000, and a random full-range 8 -> 8 groups 2
ConvTranspose2d, under the onednn and x86 engines against exact integer results. Exit 1 when oneDNN's kernel saturates
a pair (ONEDNN_MAX_CPU_ISA=AVX2 or a CPU without VNNI).
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
