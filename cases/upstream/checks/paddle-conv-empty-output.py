"""Paddle conv1d/2d/3d with no valid output position: negative shapes, empty tensors, SIGFPE, SIGSEGV

Measures F.conv1d/2d/3d whose (dilated) kernel is longer than the padded input, against the output-length
formula evaluated in Python: negative lengths (refused, or returned as a shape whose read segfaults in a child
process), length 0 (an empty tensor, or SIGFPE in NLC in a child process). Exit 1 when a convolution with no valid
output is not refused.
"""
import signal
import subprocess
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
import paddle
import paddle.nn.functional as F

rng = np.random.default_rng(0)


def out_len(n, k, s=1, d=1, pads=0):
    return (n + pads - d * (k - 1) - 1) // s + 1


if len(sys.argv) == 2 and sys.argv[1] == "conv2d-negative-read":
    y = F.conv2d(paddle.ones([1, 2, 4, 4]), paddle.ones([2, 2, 7, 7]))
    print("stage: shape", list(y.shape), flush=True)
    y.numpy()
    print("stage: read", flush=True)
    sys.exit(0)
if len(sys.argv) == 2 and sys.argv[1] == "conv1d-zero-grouped":
    x = paddle.to_tensor(rng.uniform(-1, 1, (2, 12, 6)).astype("float32"))
    w = paddle.to_tensor(rng.uniform(-1, 1, (4, 3, 14)).astype("float32"))
    y = F.conv1d(x, w, paddle.ones([4]), stride=2, padding="VALID", groups=2, data_format="NLC")
    print("stage: shape", list(y.shape), flush=True)
    y.numpy()
    print("stage: read", flush=True)
    sys.exit(0)

paddle.set_device("cpu")
print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}); AVX-512F: {paddle.base.core.supports_avx512f()}")
shown = False


def call(what, length, fn):
    global shown
    try:
        y = fn()
        print(f"{what}: output length {length} by the formula; returned shape {list(y.shape)}")
        shown = True
    except Exception as exc:  # refusing is the right answer
        msg = [ln.strip() for ln in str(exc).splitlines() if "Error" in ln or "PreconditionNotMet" in ln] or [str(exc)]
        print(f"{what}: output length {length} by the formula; refused: {msg[0][:140]}")


call("F.conv1d, input 4, kernel 7", out_len(4, 7), lambda: F.conv1d(paddle.ones([1, 2, 4]), paddle.ones([2, 2, 7])))
call("F.conv3d, input 4x4x4, kernel 7", out_len(4, 7),
     lambda: F.conv3d(paddle.ones([1, 2, 4, 4, 4]), paddle.ones([2, 2, 7, 7, 7])))
call("F.conv2d, input 4x4, kernel 7 (shape only, not read)", out_len(4, 7),
     lambda: F.conv2d(paddle.ones([1, 2, 4, 4]), paddle.ones([2, 2, 7, 7])))
call("F.conv1d, input 6, kernel 4, dilation 2, groups 3, float64", out_len(6, 4, d=2),
     lambda: F.conv1d(paddle.ones([1, 3, 6], dtype="float64"), paddle.ones([3, 1, 4], dtype="float64"), dilation=2,
                      groups=3))
for mode, what in [("conv2d-negative-read", "F.conv2d, input 4x4, kernel 7, then y.numpy()"),
                   ("conv1d-zero-grouped", "F.conv1d, input 12, kernel 14, stride 2, NLC, groups 2, bias, then y.numpy()")]:
    child = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, timeout=300)
    stages = [ln.split(": ", 1)[1] for ln in child.stdout.splitlines() if ln.startswith("stage: ")]
    mkl = [ln.strip() for ln in child.stdout.splitlines() + child.stderr.splitlines() if "MKL ERROR" in ln]
    done = stages[-1] if stages else "nothing"
    if child.returncode < 0:
        shown = True
        print(f"{what} (child process): killed by {signal.Signals(-child.returncode).name} after: {done}"
              + (f"; {len(mkl)} x \"{mkl[0]}\"" if mkl else ""))
    else:
        print(f"{what} (child process): exit status {child.returncode}, reached: {done}")
if shown:
    print("defect shown: a convolution with no valid output is not refused")
    sys.exit(1)
print("not shown: every call was refused")
sys.exit(0)
