"""CPU bfloat16 conv_transpose3d without oneDNN bfloat16 kernels adds overlapping taps in bfloat16 (col2vol)

Measures: bfloat16 conv_transpose3d without oneDNN bfloat16 kernels: the corpus's dtypes case against the
float32-accumulation bound, its equality with a NumPy emulation of GEMM-then-col2vol, and the constructed 3x3x3 case.
Exit 1 when the half-type accumulation shows.
"""
import itertools
import sys

import numpy as np
import torch
import torch.nn.functional as F

U_BF16 = 2.0**-8  # unit roundoff of bfloat16 (8 significant bits)


def to_bf16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def transposed(x, w, stride, padding, emulate=False):
    """conv_transpose of x (N, C_in, *S) with w (C_in, C_out, *K): float64, or col2vol's bfloat16 sum (emulate)."""
    n, _, *size = x.shape
    _, cout, *k = w.shape
    full = [(m - 1) * s + kk for m, s, kk in zip(size, stride, k)]
    y = np.zeros((n, cout, *full), np.float32 if emulate else np.float64)
    for tap in itertools.product(*[range(kk) for kk in k]):
        dst = (slice(None), slice(None), *[slice(t, t + (m - 1) * s + 1, s) for t, m, s in zip(tap, size, stride)])
        if emulate:
            col = to_bf16(np.einsum("nc...,co->no...", x.astype(np.float32), w[(slice(None), slice(None), *tap)].astype(np.float32)))
            y[dst] = to_bf16(y[dst] + col)
        else:
            y[dst] += np.einsum("nc...,co->no...", x, w[(slice(None), slice(None), *tap)])
    crop = (slice(None), slice(None), *[slice(p, f - p) for p, f in zip(padding, full)])
    return y[crop].astype(np.float64)


def backend_name(*args) -> str:
    """torch's choice of convolution backend (an internal API: where it is missing, inferred from oneDNN's support)."""
    try:
        chosen = torch._C._select_conv_backend(*args)
    except Exception:  # noqa: BLE001 - internal API, may change
        return "SlowTranspose3d (assumed)" if not torch.ops.mkldnn._is_mkldnn_bf16_supported() else "oneDNN (assumed)"
    name = str(chosen).rpartition(".")[2]
    return name if name != "???" else f"oneDNN (backend value {int(chosen)})"


def check(name, x, w, s, p, rng_note=""):
    """Run torch on bfloat16 x, w; print expected vs actual; return (backend, worst error/bound)."""
    cin, k = w.shape[0], w.shape[2]
    xt, wt = torch.from_numpy(x).bfloat16(), torch.from_numpy(w).bfloat16()
    backend = backend_name(xt, wt, None, [s] * 3, [p] * 3, [1] * 3, True, [0] * 3, 1, None)
    y = F.conv_transpose3d(xt, wt, stride=s, padding=p).double().numpy()
    exact = transposed(x, w, (s,) * 3, (p,) * 3)
    scale = transposed(np.abs(x), np.abs(w), (s,) * 3, (p,) * 3)
    n = cin * k**3 + 2
    bound = n * 2.0**-24 / (1 - n * 2.0**-24) * scale + U_BF16 * (scale + np.abs(exact))
    once = to_bf16(exact.astype(np.float32)).astype(np.float64)
    emul = transposed(x, w, (s,) * 3, (p,) * 3, emulate=True)
    ratio = np.abs(y - exact) / bound
    i = np.unravel_index(np.argmax(ratio), ratio.shape)
    print(f"{name}: conv_transpose3d {cin}->{w.shape[1]}, input {x.shape[2:]}, kernel {k}, stride {s}, padding {p}; "
          f"backend {backend}; output {y.shape}")
    print(f"  worst element {tuple(int(v) for v in i)}: torch {y[i]:.8g}, exact {exact[i]:.8g}, float32 sum rounded "
          f"once {once[i]:.8g}, bfloat16 col2vol emulation {emul[i]:.8g}")
    print(f"  error/bound: torch {ratio[i]:.2f}, float32 sum rounded once {np.max(np.abs(once - exact) / bound):.2f}; "
          f"elements differing from the emulation: {int((y != emul).sum())}/{y.size}")
    return backend, float(ratio.max())


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN bfloat16 kernels: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}")
    # 1. Constructed: x = 1, the first kernel tap 1 and the 26 others 2^-9 (below half a bfloat16 ulp of 1). The
    # centre output element sums all 27 taps: exact 1 + 26 * 2^-9 = 1.05078125; adding the small taps one by one in
    # bfloat16 to a running 1.0 loses each of them.
    x = np.ones((1, 1, 3, 3, 3))
    w = np.full((1, 1, 3, 3, 3), 2.0**-9)
    w[0, 0, 0, 0, 0] = 1.0
    backend, worst = check("constructed", x, w, 1, 0)
    # 2. Random normal data in the geometry convdiff's conv_transpose3d dtypes case uses (3 -> 4, input 3x4x5,
    # kernel 3, stride 2, padding 1): how far ordinary data goes.
    rng = np.random.default_rng(0)
    x = to_bf16(rng.standard_normal((1, 3, 3, 4, 5))).astype(np.float64)
    w = to_bf16(rng.standard_normal((3, 4, 3, 3, 3)) / np.sqrt(3 * 27)).astype(np.float64)
    check("random normal", x, w, 2, 1)
    if not backend.startswith("SlowTranspose3d"):
        print(f"not shown on this host: torch runs bfloat16 conv_transpose3d as {backend}, not slow_conv_transpose3d")
        return 0
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
