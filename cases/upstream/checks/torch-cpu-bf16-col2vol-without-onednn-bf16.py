"""CPU bfloat16 conv_transpose1d/2d/3d without oneDNN bfloat16 kernels add overlapping taps in bfloat16 (col2im/col2vol)

Measures: bfloat16 conv_transpose1d (kernel 9), conv_transpose2d (3x3, dilation 2) and conv_transpose3d (3x3x3) with x
= 1 and a kernel whose first tap is 1 and the others 2^-9, against float64 and a float32 sum rounded once, the backend
torch took, and the equality with a NumPy emulation of GEMM-then-col2im/col2vol in bfloat16. Exit 1 when the half-type
accumulation shows (no oneDNN bfloat16 kernels: ONEDNN_MAX_CPU_ISA=AVX2, or a CPU without avx512_core).
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
