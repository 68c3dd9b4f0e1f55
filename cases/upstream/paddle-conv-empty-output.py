"""conv with no valid output position: conv2d returns a negative shape, channels-last conv dies by SIGFPE, the 1-D backward raises

Kind: crash
Ask: a fix: refuse negative output lengths; return 0-length outputs without the GEMM in every layout.

What happens: F.conv2d of a 4x4 input with a 7x7 kernel returns shape [1, 2, -2, -2] (y.numpy() segfaults). A 0-length output works in NCL but is a SIGFPE in NLC/NHWC.

Expected: an error for a negative length, as ConvOutSize (conv_util.h) gives; 0-length outputs are supported since PR #73691.

Mechanism: ConvInferMeta (paddle/phi/infermeta/binary.cc) sets the length unchecked. ConvKernelImpl (conv_kernel_impl.h) returns early only for an empty input or filter, so an empty output reaches blas.MatMul and, channels-last, funcs::Transpose (division by zero).

Symptoms:
conv1d/2d/3d with no valid output: a negative shape, SIGFPE or an empty tensor
conv*d_transpose cropping the whole output: a 0-size tensor; the 1-D backward raises
Paddle Inference: the same 0-size tensors
"""
import sys
import paddle
import paddle.nn.functional as F
print("paddle", paddle.__version__)
shown = False
try:  # a 7x7 kernel over a 4x4 input: no valid output position
    y = F.conv2d(paddle.ones([1, 1, 4, 4]), paddle.ones([2, 1, 7, 7]))
    print("conv2d, input 4x4, kernel 7x7: output shape", y.shape, "(y.numpy() segfaults)")
    shown = min(y.shape) < 0
except Exception as e:  # what a fix does
    print("conv2d, input 4x4, kernel 7x7 raises:", str(e).strip().splitlines()[0])
print("conv1d NCL, length 6, kernel 7: output shape", F.conv1d(paddle.ones([1, 2, 6]), paddle.ones([2, 2, 7])).shape)
print("conv1d NLC, length 6, kernel 7:", flush=True)
try:
    y = F.conv1d(paddle.ones([1, 6, 2]), paddle.ones([2, 2, 7]), data_format="NLC")  # dies by SIGFPE here
    print("output shape", y.shape)
except Exception as e:
    print("raises:", str(e).strip().splitlines()[0])
sys.exit(1 if shown else 0)
