"""Adds to #64840: on CPU, conv1d/conv2d_transpose with dilation 0 or -1 return a tensor instead of raising

Kind: invalid-accepted
Ask: please check dilation > 0 in conv1d/2d/3d_transpose as conv1d/2d/3d do, with the same error on CPU and GPU.

What happens: Adding to this thread: on CPU the call does not fail at all: F.conv2d_transpose with dilation=0 on a 5x6 input and a 3x3 kernel returns shape [1, 4, 5, 6], as if the kernel were one tap, dilation=-1 returns [1, 4, 3, 4], and F.conv1d_transpose with dilation=0 returns [1, 4, 6]. F.conv2d with dilation=0 raises a clear error. The GPU's cuDNN error above is the only place the invalid value is noticed.

Expected: an error naming the dilation, as F.conv2d gives for the same value (a dilation must be a positive integer).

Mechanism: ConvTransposeInferMeta (paddle/phi/infermeta/binary.cc) checks strides > 0 but not dilations, and uses dilation * (k - 1) + 1 as the kernel extent, 1 for dilation 0; the CPU kernel then runs with it. The forward ConvInferMeta checks dilations > 0.

Symptoms:
- F.conv1d/2d/3d_transpose return a tensor for dilation 0 or -1;
- a saved model run by paddle.inference alike (float64, and float32 conv3d_transpose);
- with output_size, where the size check holds, the call runs too.
"""
import sys
import paddle
import paddle.nn.functional as F
print("paddle", paddle.__version__, "| device", paddle.device.get_device())
x, w = paddle.ones([1, 1, 5, 6]), paddle.ones([1, 4, 3, 3])  # 1 -> 4 channels, 3x3 kernel
accepted = False
for name, call in (("conv2d_transpose, dilation=0", lambda: F.conv2d_transpose(x, w, dilation=0)),
                   ("conv2d_transpose, dilation=-1", lambda: F.conv2d_transpose(x, w, dilation=-1)),
                   ("conv1d_transpose, dilation=0", lambda: F.conv1d_transpose(x[:, :, 0], w[:, :, 0], dilation=0)),
                   ("conv2d, dilation=0", lambda: F.conv2d(x, w.transpose([1, 0, 2, 3]), dilation=0))):
    try:
        y = call()
        accepted |= "transpose" in name
        print(f"{name}: returns shape {list(y.shape)}")
    except Exception as exc:  # the expected error
        print(f"{name}: raises {type(exc).__name__}: {str(exc).split('[Hint')[0].strip().splitlines()[-1][:120]}")
sys.exit(1 if accepted else 0)
