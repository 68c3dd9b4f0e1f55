"""CPU float16 conv_transpose1d/2d/3d without oneDNN float16 kernels add overlapping taps in float16 (col2im/col2vol)

Measures: float16 conv_transpose1d/2d/3d without oneDNN float16 kernels: the constructed x = 1 / taps 2^-12 cases (1-D
kernel 9, 2-D 3x3 dilation 2, 3-D 3x3x3) and a random 9 -> 11 conv_transpose2d with a 12x12 kernel, against float64
and a float32 sum rounded once (error over the float32-accumulation bound), the backend torch took, and the equality
with a NumPy emulation of GEMM-then-col2im in float16. Exit 1 when the half-type accumulation shows (no oneDNN float16
kernels: CPUs without AVX512-FP16, or ONEDNN_MAX_CPU_ISA=AVX2).
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
