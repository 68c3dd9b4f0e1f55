"""paddle.nn.functional.conv*d_transpose with padding='SAME' and output_size silently drop the dilation

Project: PaddlePaddle/Paddle (https://github.com/PaddlePaddle/Paddle/issues)
Upstream: none found
Related: https://github.com/PaddlePaddle/Paddle/pull/36474 (Paddle-TRT keeps SAME with dilation != 1 off TensorRT); https://github.com/PaddlePaddle/Paddle/pull/38999 (Paddle-TRT conv2d converter resets the dilation under SAME, as the native op does); https://github.com/PaddlePaddle/Paddle2ONNX/issues/1356 (paddle2onnx: SAME with dilation != 1 unsupported)
Checked: 2026-11-28, paddlepaddle 3.3.1 (CPU), searched PaddlePaddle/Paddle issues and PRs for "SAME dilation", "conv2d_transpose output_size SAME dilation", "UpdatePaddingAndDilation"

What happens: the output_size form of the SAME-ignores-dilation behaviour (a separate report covers the plain calls).
F.conv1d_transpose / F.conv2d_transpose with padding='SAME', dilation=2 and output_size = input * stride (the SAME
output size) return the undilated transposed convolution: float64 conv1d_transpose, input 6, kernel 3, is 4.05 away
from the dilated float64 reference at stride 1 and 3.26 at stride 2, and conv2d_transpose (input 6x6) 11, each equal
to the undilated reference to 1.8e-15. No error, no warning: output_size is honoured, the dilation is not.

Expected: a dilated kernel spans d*(k-1)+1; a SAME transposed convolution of length n and stride s is the full
transposed output ((n-1)*s + d*(k-1) + 1) cropped to n*s, the odd element at the end (TensorFlow's conv_transpose
SAME, the gradient of its SAME conv). The reference here is that, in float64 NumPy, with the taps d apart. If Paddle
means SAME to reset the dilation, it should raise or warn, and say so in the docs.

Mechanism: paddle/phi/kernels/cpu/conv_util.h, UpdatePaddingAndDilation: under padding_algorithm "SAME" it sets every
dilation to 1 and pads for the undilated kernel; conv_transpose_kernel_impl.h calls it whatever output_size says.

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
