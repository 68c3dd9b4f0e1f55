"""[Relax][TOPI] float16/bfloat16 convolutions accumulate in the half type when out_dtype is unset: a sum of 4096 ones is 2048

Kind: wrong-value
Ask: a fix: accumulate half-type convolutions in float32 and round once, also where the ONNX importer and the conv2d gradient leave out_dtype unset.

What happens: R.nn.conv2d on float16 data without out_dtype rounds every product and partial sum to float16: 4096 ones against ones give 2048 (2048 + 1 rounds back to 2048); out_dtype="float32" gives 4096, exact in float16. Short sums too: [2048, 1, 1, 1, 1, 1] over 6 channels gives 2048, not 2052. bfloat16 rounds the running sum (512 ones: 256). The ONNX importer and conv2d's gradient leave out_dtype unset as well.

Expected: the sum rounded once, as PyTorch (CPU) and ONNX Runtime give: 4096, 2052, 512.

Mechanism: python/tvm/topi/nn/conv2d.py conv (lines 806-807, main 5d4dc87): out_dtype None becomes the input dtype and the te.sum accumulates in it; legalize_ops/nn.py _nn_conv2d (line 84) passes None.

Symptoms:
- float16/bfloat16 Conv and ConvTranspose, direct and through the ONNX importer
- short sums: near the float32-accumulation error bound, data-dependent
- float16 conv2d gradients (3844 ones sum to 2048 in grad_weight)
"""
import sys
import numpy as np
import tvm
from tvm.script import relax as R

@tvm.script.ir_module
class Conv:
    @R.function
    def main(x: R.Tensor((1, 4096, 1, 1), "float16"), w: R.Tensor((1, 4096, 1, 1), "float16")):
        y = R.nn.conv2d(x, w)  # out_dtype unset: accumulates in float16
        y32 = R.nn.conv2d(x, w, out_dtype="float32")
        return (y, y32)

print("tvm", tvm.__version__)
vm = tvm.relax.VirtualMachine(tvm.compile(Conv, target="llvm"), tvm.cpu())
ones = tvm.runtime.tensor(np.ones((1, 4096, 1, 1), np.float16))
y, y32 = (t.numpy().item() for t in vm["main"](ones, ones))
print(f"sum of 4096 products 1*1: expected 4096 (exact in float16) | out_dtype unset: {y} | out_dtype float32: {y32}")
sys.exit(1 if y != 4096 else 0)
