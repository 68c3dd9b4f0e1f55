"""torch CPU float16 conv_transpose1d/2d/3d add the overlapping kernel taps in float16 (col2im / col2vol).

Where oneDNN has no float16 kernels for the CPU (torch.ops.mkldnn._is_mkldnn_fp16_supported() False: no
AVX512-FP16/AMX-FP16, e.g. an AVX2-only AMD EPYC), torch runs float16 transposed convolutions through its native
slow_conv_transpose{2,3}d: a GEMM per kernel tap (products summed in float32, the column rounded to float16),
then col2im/col2vol adds the taps that overlap one output element in float16, rounding after each add. The result
equals that emulation bit for bit (channels_first), and its error exceeds one float16 rounding of the float32 sum
(what the float32-accumulating paths give, and what the bound below allows).
"""
import itertools

import numpy as np
import torch
import torch.nn.functional as F


def reference(x, w, stride, dilation, groups, emulate=False):
    """float64 transposed conv (emulate=False), or torch's col2im in float16: per tap float32 -> float16, added in float16."""
    n, c, *size = x.shape
    _, og, *k = w.shape
    out = [(m - 1) * s + d * (kk - 1) + 1 for m, s, d, kk in zip(size, stride, dilation, k)]
    y = np.zeros((n, og * groups, *out), np.float16 if emulate else np.float64)
    cg = c // groups
    for g in range(groups):
        for tap in itertools.product(*[range(kk) for kk in k]):
            xs, ws = x[:, g * cg:(g + 1) * cg], w[(slice(g * cg, (g + 1) * cg), slice(None), *tap)]
            dst = (slice(None), slice(g * og, (g + 1) * og),
                   *[slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, dilation, size, stride)])
            if emulate:
                col = np.einsum("nc...,co->no...", xs.astype(np.float32), ws.astype(np.float32)).astype(np.float16)
                y[dst] = (y[dst].astype(np.float32) + col.astype(np.float32)).astype(np.float16)
            else:
                y[dst] += np.einsum("nc...,co->no...", xs, ws)
    return y.astype(np.float64)


print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
      f"oneDNN float16: {torch.ops.mkldnn._is_mkldnn_fp16_supported()}")
rng = np.random.default_rng(1)
# (C_in, C_out, input, kernel, stride, dilation, groups); the first is convdiff's seed-26 fuzz finding
for cin, cout, size, k, s, d, g in [(2, 6, (6, 2), (2, 7), (1, 2), (2, 1), 2), (4, 4, (9,), (5,), (2,), (1,), 1),
                                    (4, 6, (5, 5), (3, 3), (1, 1), (1, 1), 2), (4, 4, (4, 4, 4), (3, 3, 3), (1, 1, 1), (1, 1, 1), 1)]:
    x = rng.uniform(-1, 1, (2, cin, *size)).astype(np.float16).astype(np.float64)
    w = rng.uniform(-1, 1, (cin, cout // g, *k)).astype(np.float16).astype(np.float64)
    exact = reference(x, w, s, d, g)
    scale = reference(np.abs(x), np.abs(w), s, d, g)
    n_acc = cin // g * int(np.prod(k)) + 2
    bound = n_acc * 2.0**-24 * scale + 2.0**-11 * (scale + np.abs(exact))  # float32 sums, one float16 rounding
    once = exact.astype(np.float32).astype(np.float16).astype(np.float64)
    fn = getattr(F, f"conv_transpose{len(size)}d")
    y = fn(torch.from_numpy(x).half(), torch.from_numpy(w).half(), None, stride=s, dilation=d, groups=g).double().numpy()
    em = reference(x, w, s, d, g, emulate=True)
    print(f"conv_transpose{len(size)}d {cin}->{cout} input {size} kernel {k} stride {s} dilation {d} groups {g}: "
          f"torch error/bound {np.max(np.abs(y - exact) / bound):.2f} (float32 sum rounded once: "
          f"{np.max(np.abs(once - exact) / bound):.2f}); elements differing from the float16 col2im emulation: "
          f"{int((y != em).sum())}/{y.size}")
