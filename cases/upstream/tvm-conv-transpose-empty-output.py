"""[Relax][TOPI] conv1d/2d/3d_transpose whose padding crops the whole output compile and return an empty tensor, where conv refuses a zero-length output

Kind: invalid-accepted
Ask: an error for a transposed convolution whose output length along an axis is 0 or less, as TOPI's conv already raises for the forward case.

What happens: R.nn.conv1d_transpose over a length-3 input, kernel 2, strides 2, padding [3, 3] (output length 0) is typed R.Tensor((1, 1, 0)), compiles, and returns an empty tensor; the ONNX importer's ConvTranspose too, and 2-D/3-D alike. R.nn.conv1d with a zero-length output is refused at compile time ("Invalid conv parameters: lead to negative output shape [0]"). PyTorch and ONNX Runtime refuse the transposed case.

Expected: an error: the output length (L - 1) * stride - pads + dilation * (kernel - 1) + output_padding + 1 must be at least 1 (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose1d.html).

Mechanism: src/relax/op/nn/convolution.cc, InferTypeConv1dTranspose (out_w at line 718, main 5d4dc87; likewise 2-D, 3-D) has no lower bound, and the TOPI transposed convolutions lack topi.nn.conv's check (conv2d.py line 880).
"""
import sys
import numpy as np
import tvm
from tvm.script import relax as R

@tvm.script.ir_module
class ConvTranspose:
    @R.function
    def main(x: R.Tensor((1, 1, 3), "float32"), w: R.Tensor((1, 1, 2), "float32")):
        return R.nn.conv1d_transpose(x, w, strides=2, padding=[3, 3])  # output length (3-1)*2 + 2 - 6 = 0

print("tvm", tvm.__version__, "| inferred:", ConvTranspose["main"].ret_ty)
try:
    vm = tvm.relax.VirtualMachine(tvm.compile(ConvTranspose, target="llvm"), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(np.ones((1, 1, 3), np.float32)), tvm.runtime.tensor(np.ones((1, 1, 2), np.float32))).numpy()
except Exception as exc:  # the error asked for
    y = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1]}"
print("expected an error | got", y if isinstance(y, str) else f"a tensor of shape {y.shape}")
sys.exit(0 if isinstance(y, str) else 1)
