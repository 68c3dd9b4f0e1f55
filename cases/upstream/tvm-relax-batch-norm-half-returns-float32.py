"""[Relax][TOPI] nn.batch_norm on float16/bfloat16 data returns float32: the Python float epsilon promotes the legalized computation

Kind: wrong-value
Ask: a fix: add epsilon as a constant of the data's dtype in topi.nn.batch_norm (as Relay did in PR 3260), so the result keeps the declared dtype.

What happens: R.nn.batch_norm(..., training=False) on float16 data is typed as returning float16, but the compiled module returns a float32 tensor; bfloat16 the same. Every later op then runs in float32, and where one meets a float16 constant (a second batch_norm, a multiply) the module is refused: "Binary operators must have the same datatype for both operands". The ONNX importer maps BatchNormalization to the same op, so a float16 Conv -> BatchNormalization model returns float32.

Expected: the output dtype the op's own type inference declares, the input's (float16), as for float32 data.

Mechanism: python/tvm/topi/nn/batch_norm.py, batch_norm, lines 125 and 129 (main 5d4dc87): sqrt(moving_var_rs + epsilon) adds a Python float, which TE types float32 (T.Cast("float32", var) + T.float32(1e-05) in the legalized PrimFunc), and the whole normalized output follows; relax/transform/legalize_ops/nn.py _nn_batch_norm calls it unchanged.
"""
import sys
import numpy as np
import tvm
from tvm.script import relax as R

@tvm.script.ir_module
class BatchNorm:
    @R.function
    def main(x: R.Tensor((1, 2, 1, 1), "float16"), gamma: R.Tensor((2,), "float16"), beta: R.Tensor((2,), "float16"),
             mean: R.Tensor((2,), "float16"), var: R.Tensor((2,), "float16")) -> R.Tensor((1, 2, 1, 1), "float16"):
        bn = R.nn.batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=1e-5, training=False)
        return bn[0]

print("tvm", tvm.__version__, "| declared:", BatchNorm["main"].ret_ty)
vm = tvm.relax.VirtualMachine(tvm.compile(BatchNorm, target="llvm"), tvm.cpu())
x, ones = np.array([1, 2], np.float16).reshape(1, 2, 1, 1), np.ones(2, np.float16)
y = vm["main"](*(tvm.runtime.tensor(a) for a in (x, ones, ones * 0, ones * 0, ones))).numpy()
print(f"returned dtype {y.dtype}, values {y.ravel().tolist()} (expected float16, about [1.0, 2.0])")
sys.exit(1 if y.dtype != np.float16 else 0)
