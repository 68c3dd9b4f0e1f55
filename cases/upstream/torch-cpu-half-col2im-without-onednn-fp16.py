"""CPU float16 conv_transpose1d/2d/3d without oneDNN float16 kernels add overlapping taps in float16 (col2im/col2vol)

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: comment for https://github.com/pytorch/pytorch/issues/153276
Related: https://github.com/pytorch/pytorch/issues/153700 (float16 conv_transpose2d overflow handling on CPUs without oneDNN float16 kernels); https://github.com/pytorch/pytorch/issues/169688 (CPU bfloat16 convolutions inaccurate)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "float16 conv_transpose2d CPU CUDA inconsistent", "slow_conv_transpose2d col2im float16 accumulation", "conv_transpose float16 CPU inaccurate"

What happens: the CPU/CUDA difference in this issue is the CPU's accumulation. On CPUs where oneDNN has no float16
kernels (no AVX512-FP16 / AMX-FP16: the issue's Xeon model 85, AVX2-only AMD EPYC), torch runs float16 transposed
convolutions through slow_conv_transpose2d/3d: a GEMM that sums over input channels in float32 and rounds each column
entry to float16, then col2im/col2vol adds the kernel taps that overlap one output element in float16, rounding after
every add. The issue's example (kernel 12x84, stride 1: up to 1008 overlapping taps, outputs near 5e4) measured on an
AVX-512 Xeon with ONEDNN_MAX_CPU_ISA=AVX2: max |CPU - float64| = 671.6 (the issue reports 736 against CUDA); with
oneDNN's float16 kernels (the same CPU uncapped) 16.1, half a float16 ulp at that magnitude; float32 0.075. This
script uses small cases: x = 1 and a kernel whose first tap is 1 and the others 2^-12 (below half a float16 ulp of
1, so each is lost): conv_transpose1d kernel 9 and conv_transpose2d 3x3 dilation 2 return 1.0 for the exact
1.0019531 (1.99x the float32-accumulation bound), conv_transpose3d 3x3x3 1.0 for 1.0063477 (6.45x); a random case
(9 -> 11 channels, kernel 12x12, the issue's value ranges) is 2.83x over (max |error| 15.3; the float32 sum rounded
once 0.45x). Torch's output equals a NumPy emulation of
the GEMM-then-col2im order bit for bit.

Expected: a float16 convolution that accumulates in float32 and rounds once, as CUDA and oneDNN's float16 kernels do:
|y - exact| <= gamma(K + 2) * (|x| (*) |w|) + 2^-11 * ((|x| (*) |w|) + |exact|), gamma(n) = n 2^-24 / (1 - n 2^-24),
K = C_in * prod(kernel). The exact result is a float64 NumPy transposed convolution of the same float16 inputs.

Mechanism: aten/src/ATen/native/NaiveConvolutionTranspose2d.cpp / NaiveConvolutionTranspose3d.cpp
(slow_conv_transpose{2,3}d_out_cpu_template): columns = weight^T x input by GEMM, then col2im (aten/src/ATen/native/im2col.h)
or col2vol (vol2col.h) accumulate `data_im[...] += data_col[...]` with scalar_t = Half. conv_transpose1d runs as a 2-D
transposed convolution. The backend is chosen in aten/src/ATen/native/Convolution.cpp (SlowTranspose2d/3d where
oneDNN is not used for float16). Accumulating the columns into a float32 buffer (or one float32 output per element)
and rounding once would give the float32-accumulation result.

Host: CPUs where oneDNN has no float16 kernels (torch.ops.mkldnn._is_mkldnn_fp16_supported() False: CPUs without
AVX512-FP16 or AMX-FP16, e.g. Skylake/Cascade Lake Xeons, AMD EPYC, or ONEDNN_MAX_CPU_ISA=AVX2 / AVX512_CORE_BF16).
"""
import itertools
import sys

import numpy as np
import torch
import torch.nn.functional as F

U = 2.0**-11  # unit roundoff of float16


def transposed(x, w, stride, dilation, emulate=False):
    """conv_transpose of x (N, C_in, *S) with w (C_in, C_out, *K), no padding: float64, or col2im's float16 sum."""
    n, _, *size = x.shape
    _, cout, *k = w.shape
    full = [(m - 1) * s + d * (kk - 1) + 1 for m, s, d, kk in zip(size, stride, dilation, k)]
    y = np.zeros((n, cout, *full), np.float16 if emulate else np.float64)
    for tap in itertools.product(*[range(kk) for kk in k]):
        dst = (slice(None), slice(None),
               *[slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, dilation, size, stride)])
        wt = w[(slice(None), slice(None), *tap)]
        if emulate:
            col = np.einsum("nc...,co->no...", x.astype(np.float32), wt.astype(np.float32)).astype(np.float16)
            y[dst] = (y[dst].astype(np.float32) + col.astype(np.float32)).astype(np.float16)
        else:
            y[dst] += np.einsum("nc...,co->no...", x, wt)
    return y.astype(np.float64)


def backend_name(*args) -> str:
    """torch's choice of convolution backend (an internal API: where it is missing, inferred from oneDNN's support)."""
    try:
        chosen = torch._C._select_conv_backend(*args)
    except Exception:  # noqa: BLE001 - internal API, may change
        return "SlowTranspose (assumed)" if not torch.ops.mkldnn._is_mkldnn_fp16_supported() else "oneDNN (assumed)"
    name = str(chosen).rpartition(".")[2]
    return name if name != "???" else f"oneDNN (backend value {int(chosen)})"


def check(name, x, w, s, d):
    """Run torch on float16 x, w; print expected vs actual; return (backend, worst error/bound)."""
    r = x.ndim - 2
    xt, wt = torch.from_numpy(x).half(), torch.from_numpy(w).half()
    backend = backend_name(xt, wt, None, list(s), [0] * r, list(d), True, [0] * r, 1, None)
    y = getattr(F, f"conv_transpose{r}d")(xt, wt, stride=s, dilation=d).double().numpy()
    exact = transposed(x, w, s, d)
    scale = transposed(np.abs(x), np.abs(w), s, d)
    n = x.shape[1] * int(np.prod(w.shape[2:])) + 2
    bound = n * 2.0**-24 / (1 - n * 2.0**-24) * scale + U * (scale + np.abs(exact))
    once = exact.astype(np.float32).astype(np.float16).astype(np.float64)
    emul = transposed(x, w, s, d, emulate=True)
    ratio = np.abs(y - exact) / bound
    i = np.unravel_index(np.argmax(ratio), ratio.shape)
    print(f"{name}: conv_transpose{r}d {x.shape[1]}->{w.shape[1]}, input {x.shape[2:]}, kernel {w.shape[2:]}, "
          f"stride {s}, dilation {d} (backend {backend}): output {y.shape}")
    print(f"  worst element {tuple(int(v) for v in i)}: torch {y[i]:.8g}, exact {exact[i]:.8g}, float32 sum rounded once "
          f"{once[i]:.8g}; error/bound torch {ratio[i]:.2f}, rounded once {np.max(np.abs(once - exact) / bound):.2f}; "
          f"max |torch - exact| {np.abs(y - exact).max():.4g}; elements differing from the float16 col2im emulation: "
          f"{int((y != emul).sum())}/{y.size}")
    return backend, float(ratio.max())


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN float16 kernels: {torch.ops.mkldnn._is_mkldnn_fp16_supported()}")
    worst, slow = 0.0, True
    for size, k, s, d in [((9,), (9,), (1,), (1,)), ((5, 5), (3, 3), (1, 1), (2, 2)), ((3, 3, 3), (3, 3, 3), (1, 1, 1), (1, 1, 1))]:
        x = np.ones((1, 1, *size))
        w = np.full((1, 1, *k), 2.0**-12)
        w[(0, 0, *(0,) * len(k))] = 1.0
        backend, ratio = check("constructed", x, w, s, d)
        slow = slow and backend.startswith("SlowTranspose")
        worst = max(worst, ratio)
    rng = np.random.default_rng(1146)  # the value ranges of pytorch#153276, smaller shapes
    x = rng.uniform(-1, 13, (1, 9, 8, 8)).astype(np.float16).astype(np.float64)
    w = rng.uniform(-2, -1, (9, 11, 12, 12)).astype(np.float16).astype(np.float64)
    check("random", x, w, (1, 1), (1, 1))
    if not slow:
        print("not shown on this host: oneDNN runs float16 transposed convolutions here (no slow_conv_transpose path)")
        return 0
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
