"""Paddle conv*d / conv*d_transpose with padding='SAME' and a dilation > 1: the undilated convolution

Measures float64 conv1d (stride 1 and 2), conv2d (dilation [2, 1]) and conv1d_transpose with padding='SAME' and a
dilation against NumPy references of the dilated (canonical SAME) and the undilated convolution. Exit 1 when the
output equals the undilated one.
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


def conv_ref(x, w, stride, pads, dil):
    """float64 cross-correlation, NC* layout, w (O, I, *k), pads [(before, after)] per spatial dim."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads])
    w = w.astype(np.float64)
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(len(k))]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*k):
        win = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, dil, out, stride))
        y += np.einsum("nc...,oc->no...", x[(slice(None), slice(None), *win)], w[(slice(None), slice(None), *tap)])
    return y


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
for op, size, k, s, d in [("conv1d", [7], 3, 1, [2]), ("conv1d", [7], 3, 2, [2]),
                          ("conv2d", [7, 6], 3, 1, [2, 1]), ("conv1d_transpose", [6], 3, 1, [2])]:
    x = rng.standard_normal((1, 2, *size))
    transpose = op.endswith("transpose")
    w = rng.standard_normal((2, 3, *[k] * len(size)) if transpose else (3, 2, *[k] * len(size)))
    strides = [s] * len(size)
    fn = getattr(F, op)
    y = fn(paddle.to_tensor(x), paddle.to_tensor(w), stride=s, padding="SAME", dilation=d).numpy()
    if transpose:
        ref, undilated = conv_transpose_ref(x, w, strides, d), conv_transpose_ref(x, w, strides, [1] * len(size))
    else:
        ref = conv_ref(x, w, strides, [same_pads(n, k, s, dd) for n, dd in zip(size, d)], d)
        undilated = conv_ref(x, w, strides, [same_pads(n, k, s, 1) for n in size], [1] * len(size))
    what = f"{op}(input {size}, kernel {k}, stride {s}, dilation {d}, padding='SAME'), float64"
    if y.shape != ref.shape:
        print(f"{what}: shape {y.shape}, expected {ref.shape} (dilated SAME)")
        shown = True
        continue
    err = np.abs(y - ref)
    worst = tuple(int(i) for i in np.unravel_index(err.argmax(), err.shape))
    print(f"{what}: shape {y.shape} (expected {ref.shape}); max |y - dilated reference| {err.max():.3g} at {worst} "
          f"(y {y[worst]:.6f}, expected {ref[worst]:.6f}); max |y - undilated reference| "
          f"{np.abs(y - undilated).max():.3g}" if y.shape == undilated.shape else "")
    shown |= bool(err.max() > 1e-9)
if shown:
    print("defect shown: padding='SAME' computes the undilated convolution")
    sys.exit(1)
print("not shown: padding='SAME' keeps the dilation")
sys.exit(0)
