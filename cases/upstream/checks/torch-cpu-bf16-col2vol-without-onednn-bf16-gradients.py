"""CPU bfloat16 conv1d/2d/3d backward without oneDNN bfloat16 kernels adds grad_input taps in bfloat16 (col2im/col2vol)

Measures: bfloat16 conv1d/2d/3d grad_input without oneDNN bfloat16 kernels: grad_output = 1 and a kernel whose first
tap is 1 and the others 2^-9, against float64, and the kernel each took. Exit 1 when the half-type accumulation shows.
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
