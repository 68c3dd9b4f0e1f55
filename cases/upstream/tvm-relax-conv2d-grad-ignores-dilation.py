"""[Relax] The gradient of a dilated conv2d ignores the dilation: grad_input has the wrong shape, or the transposed conv it builds is refused

Kind: wrong-value
Ask: a fix: use the dilated kernel extent, dilation * (kernel - 1) + 1, when conv2d_grad computes output_padding.

What happens: Taking relax.transform.Gradient of sum(R.nn.conv2d(x 1x1x5x5, w 1x1x3x3, strides=4, dilation=2)) gives a grad_input of shape (1, 1, 7, 7) for the 5x5 input: right values in the top-left 5x5, then two rows and columns of zeros. Where the output_padding it computes is not below the stride (strides 1), building the gradient fails: "Conv2dTranspose expects the output padding less than the strides".

Expected: grad_input has the input's shape; here w's taps scattered every second element of a 5x5 zero array (the adjoint of the dilated convolution).

Mechanism: python/tvm/relax/op/_op_gradient.py, conv2d_grad (lines 1201-1204, main 5d4dc87): out_h = (grad_h - 1) * stride_h - pad_top - pad_bottom + filter_h omits the dilation, so output_padding comes out (dilation - 1) * (kernel - 1) too large (the class of pytorch/pytorch#16012).
"""
import sys
import numpy as np
import tvm
from tvm import relax
from tvm.script import relax as R
@tvm.script.ir_module
class Conv:
    @R.function
    def main(x: R.Tensor((1, 1, 5, 5), "float32"), w: R.Tensor((1, 1, 3, 3), "float32")):
        with R.dataflow():
            y = R.sum(R.nn.conv2d(x, w, strides=4, dilation=2))  # one output element: sum of x[0::2, 0::2] * w
            R.output(y)
        return y
print("tvm", tvm.__version__)
vm = relax.VirtualMachine(tvm.compile(relax.transform.LegalizeOps()(relax.transform.Gradient("main")(Conv)), target="llvm"), tvm.cpu())
w = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
grad_x = vm["main_adjoint"](tvm.runtime.tensor(np.ones((1, 1, 5, 5), np.float32)), tvm.runtime.tensor(w))[1][0].numpy()
expected = np.kron(w, [[1, 0], [0, 0]])[..., :5, :5]  # w's taps every second element (the dilated kernel), 5x5
print("expected grad_input", expected.shape, "\n", expected[0, 0], "\ngot", grad_x.shape, "\n", grad_x[0, 0])
sys.exit(0 if grad_x.shape == expected.shape and np.array_equal(grad_x, expected) else 1)
