"""Paddle conv / conv_transpose with padding='SAME' and a dilation: the input and weight gradients

Measures float64 dx and dw of conv1d, conv2d (dilation [2, 1]) and conv1d_transpose with padding='SAME' and a
dilation against the adjoints of the dilated and the undilated linear forward (no autograd in the reference). Exit
1 when the gradients are the undilated convolution's.
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



def forward_ref(op, x, w, stride, dil):
    """The float64 SAME forward with the given dilation."""
    if op.endswith("transpose"):
        return conv_transpose_ref(x, w, stride, dil)
    k = w.shape[2:]
    return conv_ref(x, w, stride, [same_pads(n, kk, s, d) for n, kk, s, d in zip(x.shape[2:], k, stride, dil)], dil)


def grads_ref(op, x, w, dy, stride, dil):
    """dL/dx and dL/dw of L = <dy, forward(x, w)>, element by element through the linear forward."""
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = 1.0
        gx[idx] = np.sum(dy * forward_ref(op, e, w, stride, dil))
    for idx in np.ndindex(*w.shape):
        e = np.zeros_like(w)
        e[idx] = 1.0
        gw[idx] = np.sum(dy * forward_ref(op, x, e, stride, dil))
    return gx, gw


print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}), device {paddle.get_device()}")
paddle.set_device("cpu")
rng = np.random.default_rng(0)
shown = False
for op, size, s, d in [("conv1d", [7], 1, [2]), ("conv2d", [5, 4], 1, [2, 1]), ("conv1d_transpose", [6], 1, [2])]:
    transpose = op.endswith("transpose")
    x = rng.standard_normal((1, 2, *size))
    w = rng.standard_normal((2, 3, *[3] * len(size)) if transpose else (3, 2, *[3] * len(size)))
    strides = [s] * len(size)
    dy = rng.standard_normal(forward_ref(op, x, w, strides, d).shape)
    xt, wt = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(w, stop_gradient=False)
    y = getattr(F, op)(xt, wt, stride=s, padding="SAME", dilation=d)
    if tuple(y.shape) != dy.shape:
        print(f"{op}: forward shape {tuple(y.shape)}, expected {dy.shape}")
        shown = True
        continue
    gx, gw = (g.numpy() for g in paddle.grad([y], [xt, wt], [paddle.to_tensor(dy)]))
    rx, rw = grads_ref(op, x, w, dy, strides, d)
    ux, uw = grads_ref(op, x, w, dy, strides, [1] * len(size))
    ex, ew = np.abs(gx - rx).max(), np.abs(gw - rw).max()
    print(f"{op}(input {size}, kernel 3, stride {s}, dilation {d}, padding='SAME'), float64: max |dx - dilated reference| "
          f"{ex:.3g}, max |dw - dilated reference| {ew:.3g}; vs the undilated reference: dx {np.abs(gx - ux).max():.2g}, "
          f"dw {np.abs(gw - uw).max():.2g}")
    shown |= bool(max(ex, ew) > 1e-9)
if shown:
    print("defect shown: the gradients are those of the undilated convolution")
    sys.exit(1)
print("not shown: the gradients keep the dilation")
sys.exit(0)
