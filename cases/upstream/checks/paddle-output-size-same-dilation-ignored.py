"""Paddle conv*d_transpose with padding='SAME', output_size and a dilation > 1

Measures float64 conv1d/2d_transpose with padding='SAME', output_size = input * stride and a dilation against the
dilated and the undilated transposed convolution in NumPy. Exit 1 when the output is the undilated one.
"""
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
import paddle
import paddle.nn.functional as F


def same_pads(n, k, s, d):
    """TensorFlow's SAME padding for one spatial dim of a dilated kernel: (before, after)."""
    total = max((-(-n // s) - 1) * s + d * (k - 1) + 1 - n, 0)
    return total // 2, total - total // 2


def conv_transpose_ref(x, w, stride, dil):
    """float64 transposed conv, NC*, w (I, O, *k), cropped to n*s as TensorFlow's SAME does."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dil[i] * (k[i] - 1) + 1 for i in range(len(k))]
    y = np.zeros((x.shape[0], w.shape[1], *full))
    for tap in np.ndindex(*k):
        win = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, dil, x.shape[2:], stride))
        y[(slice(None), slice(None), *win)] += np.einsum("nc...,co->no...", x, w[(slice(None), slice(None), *tap)])
    crops = [same_pads(n * s, kk, s, d) for n, kk, s, d in zip(x.shape[2:], k, stride, dil)]
    return y[(slice(None), slice(None), *(slice(b, f - a) for (b, a), f in zip(crops, full)))]



print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}), device {paddle.get_device()}")
paddle.set_device("cpu")
rng = np.random.default_rng(0)
shown = False
for op, size, s in [("conv1d_transpose", [6], 1), ("conv1d_transpose", [6], 2), ("conv2d_transpose", [6, 6], 1)]:
    k, d = 3, [2] * len(size)
    x = rng.standard_normal((1, 2, *size))
    w = rng.standard_normal((2, 3, *[k] * len(size)))
    strides = [s] * len(size)
    out = [n * s for n in size]
    ref = conv_transpose_ref(x, w, strides, d)
    undilated = conv_transpose_ref(x, w, strides, [1] * len(size))
    what = f"{op}(input {size}, kernel {k}, stride {s}, dilation 2, padding='SAME', output_size={out}), float64"
    try:
        y = getattr(F, op)(paddle.to_tensor(x), paddle.to_tensor(w), stride=s, padding="SAME", dilation=2,
                           output_size=out).numpy()
    except Exception as exc:  # not expected: said in one line rather than a traceback
        print(f"{what}: raised {str(exc).strip().splitlines()[-1][:200]}")
        continue
    if y.shape != ref.shape:
        print(f"{what}: shape {y.shape}, expected {ref.shape}")
        shown = True
        continue
    err = np.abs(y - ref)
    worst = tuple(int(i) for i in np.unravel_index(err.argmax(), err.shape))
    print(f"{what}: shape {y.shape}; max |y - dilated reference| {err.max():.3g} at {worst} (y {y[worst]:.6f}, "
          f"expected {ref[worst]:.6f}); max |y - undilated reference| {np.abs(y - undilated).max():.3g}")
    shown |= bool(err.max() > 1e-9)
if shown:
    print("defect shown: padding='SAME' with output_size computes the undilated transposed convolution")
    sys.exit(1)
print("not shown: padding='SAME' keeps the dilation")
sys.exit(0)
