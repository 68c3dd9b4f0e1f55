"""[Relax] R.nn.conv2d accepts dilation=0 and negative padding and compiles them, instead of rejecting the attributes

Kind: invalid-accepted
Ask: An error when the op is built or its struct info inferred: dilation >= 1 and padding >= 0, transposed convolutions included (they refuse dilation 0, not -1).

What happens: R.nn.conv2d(x, w, dilation=0) on a 1x4x5x6 input with a 4x4x3x3 weight compiles for llvm and returns a (1, 4, 5, 6) tensor of 36s: the nine taps read one input element. padding=-1 returns (1, 4, 1, 2): the input is cropped. The ONNX importer passes such attributes through.

Expected: an error, as PyTorch gives; ONNX Conv's pads "can take any value greater than or equal to 0" (https://onnx.ai/onnx/operators/onnx__Conv.html).

Mechanism: src/relax/op/nn/convolution.cc: conv1d/conv2d/conv3d check groups > 0 and the lengths of strides and dilation, never their values; InferStructInfoConv2d then computes (H + pad - dilation * (k - 1) - 1) / stride + 1 as given, and TOPI's conv2d only refuses an output length below 1.

Symptoms:
- conv1d/2d/3d with dilation 0 or -1, or a negative padding, compile and run;
- conv1d/2d/3d_transpose with dilation -1 and a kernel of at most 2 on that axis run too.
"""
import sys
import numpy as np
import tvm
from tvm.script import relax as R
@tvm.script.ir_module
class Conv:
    @R.function
    def main(x: R.Tensor((1, 4, 5, 6), "float32"), w: R.Tensor((4, 4, 3, 3), "float32")):
        return (R.nn.conv2d(x, w, dilation=0), R.nn.conv2d(x, w, padding=-1))  # both invalid
print("tvm", tvm.__version__)
try:
    vm = tvm.relax.VirtualMachine(tvm.compile(Conv, target="llvm"), tvm.cpu())  # an error was expected here
except Exception as exc:  # any refusal is the fix
    sys.exit(print("compile refused the module, as expected:", str(exc).splitlines()[-1][:160]))  # exit status 0
x, w = tvm.runtime.tensor(np.ones((1, 4, 5, 6), np.float32)), tvm.runtime.tensor(np.ones((4, 4, 3, 3), np.float32))
for name, y in zip(("dilation=0", "padding=-1"), vm["main"](x, w)):
    print(f"{name}: returned shape {y.numpy().shape}, values {np.unique(y.numpy()).tolist()} (an error was expected)")
sys.exit(1)
