"""paddle.nn.functional.conv*d / conv*d_transpose with padding='SAME' silently drop the dilation

Project: PaddlePaddle/Paddle (https://github.com/PaddlePaddle/Paddle/issues)
Upstream: none found
Related: https://github.com/PaddlePaddle/Paddle/pull/36474 (Paddle-TRT keeps SAME with dilation != 1 off TensorRT); https://github.com/PaddlePaddle/Paddle/pull/38999 (Paddle-TRT conv2d converter resets the dilation under SAME, as the native op does); https://github.com/PaddlePaddle/Paddle2ONNX/issues/1356 (paddle2onnx: SAME with dilation != 1 unsupported)
Checked: 2026-11-28, paddlepaddle 3.3.1 (CPU), searched PaddlePaddle/Paddle issues and PRs for "SAME dilation", "padding_algorithm SAME dilation", "UpdatePaddingAndDilation", "空洞卷积 SAME"

What happens: with padding='SAME' and dilation > 1, Paddle computes the undilated convolution. float64
conv1d, input length 7, kernel 3, dilation 2: the output equals the undilated float64 reference (to 4.4e-16) and is
2.17 away from the dilated one at stride 1, 3.94 at stride 2; conv2d with dilation [2, 1]: 12.2 away; conv1d_transpose
with dilation 2: 9.75 away (each equal to the undilated result to 3e-15). No error, no warning: under 'SAME' the
dilation argument has no effect at all.

Expected: a dilated kernel of size k spans d*(k-1)+1 input elements, and SAME pads for that span: TensorFlow
(total = max((ceil(n/s)-1)*s + d*(k-1)+1 - n, 0), the odd element after), PyTorch (padding='same', stride 1:
d*(k-1) in total) and ONNX (auto_pad SAME_UPPER) all do, with the taps kept d apart. The reference here is a float64
NumPy cross-correlation with those pads and the dilation kept; for the transposed conv, the full dilated transposed
output cropped to n*s the same way. If Paddle means SAME to reset the dilation, it should raise or at least warn, and
the docs should say so: conv1d/2d/3d(_transpose) name 'SAME' without a word on dilation, and conv1d_transpose's says
"The padding argument effectively adds `dilation * (kernel - 1)` amount of zero-padding".

Mechanism: paddle/phi/kernels/cpu/conv_util.h, UpdatePaddingAndDilation: for padding_algorithm == "SAME" it computes
the pads from ksize, the undilated kernel, and then sets every dilation to 1 (`*(dilation->begin() + i) = 1;`). The
conv, conv_transpose and their gradient kernels call it (paddle/phi/kernels/impl/conv_kernel_impl.h,
conv_transpose_kernel_impl.h, conv_grad_kernel_impl.h, conv_transpose_grad_kernel_impl.h), and so does the oneDNN
handler (paddle/phi/kernels/onednn/conv_handler.h). Paddle-TRT knows the two disagree: PR 36474 keeps SAME with a
dilation off TensorRT, PR 38999 resets the dilation in the TensorRT converter to match.

Host: any.
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
