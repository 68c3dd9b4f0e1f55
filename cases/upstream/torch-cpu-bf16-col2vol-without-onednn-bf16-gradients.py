"""CPU bfloat16 conv1d/2d/3d backward without oneDNN bfloat16 kernels adds grad_input taps in bfloat16 (col2im/col2vol)

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/153276 (float16 conv_transpose2d CPU vs CUDA: the same col2im rounding, forward); https://github.com/pytorch/pytorch/issues/169688 (CPU bfloat16 convolutions with stride 3 inaccurate)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "bfloat16 conv3d backward grad_input CPU inaccurate", "slow_conv3d backward bfloat16 precision", "col2im bfloat16 accumulation"

What happens: a convolution's grad_input is a transposed convolution of grad_output. Where oneDNN has no bfloat16
kernels for the CPU, torch computes it in the slow path: a GEMM (weight^T x grad_output, summed in float32, each column
entry rounded to bfloat16), then col2im/col2vol adds the kernel taps that overlap one input element in bfloat16,
rounding after every add. Measured on an AVX-512 Xeon under ONEDNN_MAX_CPU_ISA=AVX2, grad_output = 1 and a kernel
whose first tap is 1 and the others 2^-9 (each below half a bfloat16 ulp of 1): conv1d kernel 9 and conv2d 3x3 give
grad_input 1.0 for the exact 1.015625 (1.97x the float32-accumulation bound), conv3d 3x3x3 1.0 for 1.0507812 (6.2x);
with oneDNN's kernels (the same CPU uncapped) conv3d gives 1.046875. The taps are added in kernel-index order: with the
large tap last instead of first, conv3d gives 1.046875. On random data the excess is data-dependent (convdiff measured
1.04x on a grouped 3x3x2 SAME conv3d; its conv3d dtypes case is at 0.95x).

Expected: grad_input accumulated in float32 and rounded once, as oneDNN's kernels do:
|g - exact| <= gamma(K + 2) * (|dy| (*) |w|) + 2^-8 * ((|dy| (*) |w|) + |exact|), gamma(n) = n 2^-24 / (1 - n 2^-24),
K = C_out * prod(kernel). The exact result is the float64 NumPy transposed convolution of grad_output with the weight.

Mechanism: conv1d/conv2d take the Slow2d backend (aten/src/ATen/native/ConvolutionMM2d.cpp,
slow_conv2d_backward_update_grad_input_frame: a GEMM into fgrad_input, then unfolded2d_acc_stub,
aten/src/ATen/native/cpu/Unfold2d.cpp) and conv3d Slow3d (ConvolutionMM3d.cpp: a GEMM, then Unfold3dAccCPU in
Unfold3d.cpp); both add the columns into the bfloat16 grad_input with scalar_t = BFloat16, tap by tap.

Host: CPUs where oneDNN has no bfloat16 kernels (torch.ops.mkldnn._is_mkldnn_bf16_supported() False: CPUs without
AVX-512, e.g. AVX2-only AMD EPYC, or ONEDNN_MAX_CPU_ISA=AVX2).
"""
import itertools
import sys

import numpy as np
import torch
import torch.nn.functional as F

U = 2.0**-8  # unit roundoff of bfloat16


def grad_input(dy: np.ndarray, w: np.ndarray) -> np.ndarray:
    """float64 grad_input of a stride-1, unpadded conv: the transposed conv of dy (N, C_out, *S) with w (C_out, C_in, *K)."""
    n, _, *size = dy.shape
    _, cin, *k = w.shape
    g = np.zeros((n, cin, *[m + kk - 1 for m, kk in zip(size, k)]))
    for tap in itertools.product(*[range(kk) for kk in k]):
        dst = (slice(None), slice(None), *[slice(t, t + m) for t, m in zip(tap, size)])
        g[dst] += np.einsum("no...,oc->nc...", dy, w[(slice(None), slice(None), *tap)])
    return g


def backend_name(*args) -> str:
    """torch's choice of convolution backend (an internal API: where it is missing, inferred from oneDNN's support)."""
    try:
        chosen = torch._C._select_conv_backend(*args)
    except Exception:  # noqa: BLE001 - internal API, may change
        return "Slow (assumed)" if not torch.ops.mkldnn._is_mkldnn_bf16_supported() else "oneDNN (assumed)"
    name = str(chosen).rpartition(".")[2]
    return name if name != "???" else f"oneDNN (backend value {int(chosen)})"


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN bfloat16 kernels: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}")
    worst, slow = 0.0, True
    for r, k in ((1, 9), (2, 3), (3, 3)):
        w = np.full((1, 1) + (k,) * r, 2.0**-9)
        w[(0, 0) + (0,) * r] = 1.0  # the first tap large, the others below half an ulp of it
        wt = torch.from_numpy(w).bfloat16()
        x = torch.zeros((1, 1) + (2 * k - 1,) * r, dtype=torch.bfloat16, requires_grad=True)
        backend = backend_name(x, wt, None, [1] * r, [0] * r, [1] * r, False, [0] * r, 1, None)
        slow = slow and backend.startswith("Slow")
        y = getattr(F, f"conv{r}d")(x, wt)
        y.backward(torch.ones_like(y))
        g = x.grad.double().numpy()
        dy = np.ones(tuple(y.shape))
        exact = grad_input(dy, w)
        scale = grad_input(np.abs(dy), np.abs(w))
        n = k**r + 2
        bound = n * 2.0**-24 / (1 - n * 2.0**-24) * scale + U * (scale + np.abs(exact))
        ratio = np.abs(g - exact) / bound
        i = np.unravel_index(np.argmax(ratio), ratio.shape)
        worst = max(worst, float(ratio.max()))
        print(f"conv{r}d kernel {(k,) * r}, grad_output = 1 (backend {backend}): grad_input {g.shape}; worst element "
              f"{tuple(int(v) for v in i)}: torch {g[i]:.8g}, exact {exact[i]:.8g}, error/bound {ratio[i]:.2f}")
    if not slow:
        print("not shown on this host: oneDNN runs bfloat16 convolution backward here (no Slow2d/Slow3d path)")
        return 0
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
