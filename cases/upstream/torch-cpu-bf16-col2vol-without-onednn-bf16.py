"""CPU bfloat16 conv_transpose1d/2d/3d without oneDNN bfloat16 kernels add overlapping taps in bfloat16 (col2im/col2vol)

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/153276 (float16 conv_transpose2d CPU vs CUDA: the same col2im rounding in float16); https://github.com/pytorch/pytorch/issues/169688 (CPU bfloat16 convolutions with stride 3 inaccurate)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "bfloat16 conv_transpose CPU inaccurate", "slow_conv_transpose2d col2im bfloat16 accumulation", "bfloat16 ConvTranspose precision CPU"

What happens: where oneDNN has no bfloat16 kernels for the CPU, torch runs bfloat16 transposed convolutions of every
rank through slow_conv_transpose2d/3d: a GEMM that sums in float32 and rounds each column entry to bfloat16, then
col2im/col2vol adds the kernel taps that overlap one output element (stride < dilated kernel) in bfloat16, rounding
after every add. Measured on an AVX-512 Xeon under ONEDNN_MAX_CPU_ISA=AVX2, with x = 1 and a kernel whose first tap is
1 and the others 2^-9 (each below half a bfloat16 ulp of the running sum 1.0, so each is lost): 1-D kernel 9 returns
1.0 for the exact 1.015625 (1.97x the float32-accumulation bound), 2-D 3x3 dilation 2 the same (1.97x), 3-D 3x3x3 1.0
for 1.0507812 (6.2x); a float32 sum rounded once stays within 0.5x. On random normal data the excess is smaller and
data-dependent (convdiff measured 1.04x-1.21x on some cases, others pass). convdiff found torch.compile (inductor)
returning eager's output bit for bit (it calls the same kernel). With oneDNN's bfloat16 kernels (the same CPU
uncapped) every case is within the bound.

Expected: a bfloat16 convolution that accumulates in float32 and rounds the result once, as oneDNN's kernels do:
|y - exact| <= gamma(K + 2) * (|x| (*) |w|) + 2^-8 * ((|x| (*) |w|) + |exact|), gamma(n) = n 2^-24 / (1 - n 2^-24),
K = C_in * prod(kernel). The exact result is a float64 NumPy transposed convolution of the same bfloat16 inputs.

Mechanism: aten/src/ATen/native/NaiveConvolutionTranspose2d.cpp and NaiveConvolutionTranspose3d.cpp
(slow_conv_transpose{2,3}d_out_cpu_template): columns = weight^T x input by GEMM, then col2im (aten/src/ATen/native/im2col.h)
or col2vol (vol2col.h) accumulate `data_im[...] += data_col[...]` with scalar_t = BFloat16. conv_transpose1d is run as
a 2-D transposed convolution. Torch's output equals a NumPy emulation of that order bit for bit (the script counts the
elements that differ).

Host: CPUs where oneDNN has no bfloat16 kernels (torch.ops.mkldnn._is_mkldnn_bf16_supported() False: CPUs without
AVX-512, e.g. AVX2-only AMD EPYC, or ONEDNN_MAX_CPU_ISA=AVX2).
"""
import itertools
import sys

import numpy as np
import torch
import torch.nn.functional as F

U = 2.0**-8  # unit roundoff of bfloat16


def to_bf16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def transposed(x, w, stride, dilation, emulate=False):
    """conv_transpose of x (N, C_in, *S) with w (C_in, C_out, *K), no padding: float64, or col2im's bfloat16 sum."""
    n, _, *size = x.shape
    _, cout, *k = w.shape
    full = [(m - 1) * s + d * (kk - 1) + 1 for m, s, d, kk in zip(size, stride, dilation, k)]
    y = np.zeros((n, cout, *full), np.float32 if emulate else np.float64)
    for tap in itertools.product(*[range(kk) for kk in k]):
        dst = (slice(None), slice(None),
               *[slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, dilation, size, stride)])
        wt = w[(slice(None), slice(None), *tap)]
        if emulate:
            y[dst] = to_bf16(y[dst] + to_bf16(np.einsum("nc...,co->no...", x.astype(np.float32), wt.astype(np.float32))))
        else:
            y[dst] += np.einsum("nc...,co->no...", x, wt)
    return y.astype(np.float64)


def backend_name(*args) -> str:
    """torch's choice of convolution backend (an internal API: where it is missing, inferred from oneDNN's support)."""
    try:
        chosen = torch._C._select_conv_backend(*args)
    except Exception:  # noqa: BLE001 - internal API, may change
        return "SlowTranspose (assumed)" if not torch.ops.mkldnn._is_mkldnn_bf16_supported() else "oneDNN (assumed)"
    name = str(chosen).rpartition(".")[2]
    return name if name != "???" else f"oneDNN (backend value {int(chosen)})"


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN bfloat16 kernels: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}")
    worst, slow = 0.0, True
    # (input size, kernel, stride, dilation); x = 1, kernel tap 0 = 1, every other tap 2^-9
    for size, k, s, d in [((9,), (9,), (1,), (1,)), ((5, 5), (3, 3), (1, 1), (2, 2)), ((3, 3, 3), (3, 3, 3), (1, 1, 1), (1, 1, 1))]:
        r = len(size)
        x = np.ones((1, 1, *size))
        w = np.full((1, 1, *k), 2.0**-9)
        w[(0, 0, *(0,) * r)] = 1.0
        xt, wt = torch.from_numpy(x).bfloat16(), torch.from_numpy(w).bfloat16()
        backend = backend_name(xt, wt, None, list(s), [0] * r, list(d), True, [0] * r, 1, None)
        slow = slow and backend.startswith("SlowTranspose")
        y = getattr(F, f"conv_transpose{r}d")(xt, wt, stride=s, dilation=d).double().numpy()
        exact = transposed(x, w, s, d)
        scale = transposed(np.abs(x), np.abs(w), s, d)
        n = int(np.prod(k)) + 2
        bound = n * 2.0**-24 / (1 - n * 2.0**-24) * scale + U * (scale + np.abs(exact))
        once = to_bf16(exact.astype(np.float32)).astype(np.float64)
        emul = transposed(x, w, s, d, emulate=True)
        ratio = np.abs(y - exact) / bound
        i = np.unravel_index(np.argmax(ratio), ratio.shape)
        worst = max(worst, float(ratio.max()))
        print(f"conv_transpose{r}d input {size}, kernel {k}, stride {s}, dilation {d} (backend {backend}): output "
              f"{y.shape}; worst element {tuple(int(v) for v in i)}: torch {y[i]:.8g}, exact {exact[i]:.8g}, float32 sum "
              f"rounded once {once[i]:.8g}; error/bound torch {ratio[i]:.2f}, rounded once "
              f"{np.max(np.abs(once - exact) / bound):.2f}; elements differing from the bfloat16 col2im emulation: "
              f"{int((y != emul).sum())}/{y.size}")
    if not slow:
        print("not shown on this host: oneDNN runs bfloat16 transposed convolutions here (no slow_conv_transpose path)")
        return 0
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
