"""paddle.nn.functional.conv*d_transpose return an empty tensor when the padding crops the whole output, but raise when it crops more

Project: PaddlePaddle/Paddle (https://github.com/PaddlePaddle/Paddle/issues)
Upstream: none found
Related: https://github.com/PaddlePaddle/Paddle/pull/73698 (0-size Tensor support for conv1d/2d/3d_transpose)
Checked: 2026-11-28, paddlepaddle 3.3.1 (CPU), searched PaddlePaddle/Paddle issues for "conv_transpose empty output padding", "conv2d_transpose output size 0", "conv1d_transpose padding larger than output"

What happens: a transposed convolution's output length is (n - 1) * s + d * (k - 1) + 1 + output_padding - pad_before
- pad_after. Where the padding crops all of it (length exactly 0), F.conv1d_transpose / conv2d_transpose /
conv3d_transpose return an empty tensor: conv1d_transpose, input 11, kernel 1, stride 3, padding [15, 16] -> shape
[1, 1, 0] (with output_size=[0] too); input 1, kernel 1, padding [0, 1] -> [1, 1, 0]; conv2d_transpose input 3x3,
kernel 2, stride 2, padding 3 -> [1, 1, 0, 0]; conv3d_transpose alike. One more element of padding (length -1,
padding [16, 16]) raises "Expected valid() == true". A paddle.jit.save'd model of the same call is refused by
paddle.inference (std::exception; measured 2026-11-25).

Expected: an error for length 0 as for length -1, as PyTorch's CPU conv_transpose does ("Output size is too small")
and as the convention that an output length below 1 is invalid says. Paddle added 0-size outputs to these kernels on
purpose (PR 73698, "0-size Tensor support"), so this may be by design; then the two cases disagree, and a padding
that crops everything is more likely a user error than a request for an empty tensor. The reference here is the
output-length formula, evaluated in Python.

Mechanism: ConvTransposeInferMeta (paddle/phi/infermeta/binary.cc) sets the length as computed, 0 included; the
kernels accept a 0-size output since PR 73698, while a negative length fails at allocation.

Host: any.
"""
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
import paddle
import paddle.nn.functional as F

paddle.set_device("cpu")
print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}), device {paddle.get_device()}")
shown = False
for op, size, k, s, pads, kw in [("conv1d_transpose", 11, 1, 3, [15, 16], {}),
                                 ("conv1d_transpose", 11, 1, 3, [15, 16], {"output_size": [0]}),
                                 ("conv1d_transpose", 1, 1, 1, [0, 1], {}),
                                 ("conv2d_transpose", 3, 2, 2, [3, 3, 3, 3], {}),
                                 ("conv3d_transpose", 3, 2, 2, [3] * 6, {}),
                                 ("conv1d_transpose", 11, 1, 3, [16, 16], {})]:
    rank = int(op[4])
    x = paddle.to_tensor(np.ones((1, 1, *[size] * rank), np.float32))
    w = paddle.to_tensor(np.ones((1, 1, *[k] * rank), np.float32))
    length = (size - 1) * s + k - pads[0] - pads[1]
    what = f"{op}(input {size}, kernel {k}, stride {s}, padding {pads}{', output_size=[0]' if kw else ''})"
    try:
        y = getattr(F, op)(x, w, stride=s, padding=pads, **kw)
        print(f"{what}: output length {length} by the formula; returned shape {list(y.shape)}")
        shown |= length < 1
    except Exception as exc:  # refusing an output length below 1 is the right answer
        print(f"{what}: output length {length} by the formula; raised: {str(exc).strip().splitlines()[-1].strip()[:110]}")
if shown:
    print("defect shown: an output of length 0 is returned instead of an error")
    sys.exit(1)
print("not shown: every output length below 1 was refused")
sys.exit(0)
