"""Paddle conv1d/2d/3d_transpose whose padding crops the whole output, forward and backward

Measures the eager transposed convolutions against the output-length formula: length 0 returns a 0-size tensor
(with and without output_size), length -1 raises; then the backward through a length-0 output (conv1d_transpose
raises a contiguity error, 2-D/3-D give zero gradients) beside a length-2 control. Exit 1 when a length-0 output
is returned.
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
for op, pads in [("conv1d_transpose", 3), ("conv1d_transpose", 2), ("conv2d_transpose", 3), ("conv3d_transpose", 3)]:
    rank = int(op[4])  # input 3, kernel 2, stride 2: full length 6, so padding 3 leaves 0 and padding 2 leaves 2
    x = paddle.to_tensor(np.ones((1, 1, *[3] * rank), np.float32), stop_gradient=False)
    w = paddle.to_tensor(np.ones((1, 1, *[2] * rank), np.float32), stop_gradient=False)
    y = getattr(F, op)(x, w, stride=2, padding=pads)
    try:
        y.sum().backward()
        print(f"{op}, output {list(y.shape)}: backward gives |dx| sum {float(x.grad.abs().sum()):g}, |dw| sum "
              f"{float(w.grad.abs().sum()):g}")
    except Exception as exc:  # the 1-D backward through a 0-size output
        print(f"{op}, output {list(y.shape)}: backward raises: {' '.join(str(exc).split())[:200]}")
if shown:
    print("defect shown: an output of length 0 is returned instead of an error")
    sys.exit(1)
print("not shown: every output length below 1 was refused")
sys.exit(0)
