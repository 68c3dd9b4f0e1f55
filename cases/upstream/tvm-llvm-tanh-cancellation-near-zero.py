"""[TIR][LLVM] tanh loses its relative precision near 0: float32 up to ~900 ulps off, float16 tanh(-1e-4) = 0

Kind: wrong-value
Ask: Please lower tir.tanh without the cancellation near 0 (for example tanh(x) = x below a small |x|, or an expm1-based form), or call the target's tanh.

What happens: relax.op.tanh compiled for llvm returns tanh(-0.0002) = -0.00020001359 (the exact value is -0.00019999999: 934 float32 ulps off) and tanh(1e-4) = 9.99967961e-05 (440 ulps); over 200,001 float32 points in [-10, 10], 212 are more than 8 ulps off, all with |x| < 0.03, where NumPy's float32 tanh stays within 1.3 ulps. In float16, tanh(-0.0001) returns 0. A convolution followed by tanh, imported from ONNX or PyTorch, meets it wherever an output lands near 0.

Expected: tanh within a few ulps of the exact value, as libm's tanhf and NumPy give.

Mechanism: the llvm FLowerIntrinsic of tir.tanh (src/target/llvm/intrin_rule_llvm.cc) computes (1 - exp(-2x)) / (1 + exp(-2x)) for x >= 0 and (exp(2x) - 1) / (exp(2x) + 1) below: for small |x| the numerator is the difference of two numbers near 1, so its rounding error (about 6e-8 in float32) is the whole of its relative error.
"""
import sys

import numpy as np
import tvm
from tvm import relax

xs = np.array([-0.0002, 1e-4, 0.003, 0.02, 0.5], np.float32)
bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType(shape=xs.shape, dtype="float32"))
with bb.function("main", [x]):
    bb.emit_func_output(bb.emit(relax.op.tanh(x)))
vm = relax.VirtualMachine(tvm.compile(bb.get(), target="llvm"), tvm.cpu())
got = vm["main"](tvm.runtime.tensor(xs)).numpy().astype(np.float64)
exact = np.tanh(xs.astype(np.float64))
ulps = np.abs(got - exact) / np.spacing(np.abs(exact).astype(np.float32))
print("tvm", tvm.__version__)
for a, g, e, u in zip(xs, got, exact, ulps):
    print(f"tanh({a:g}) = {g:.9g}, exact {e:.9g}: {u:.0f} ulps")
sys.exit(1 if ulps.max() > 8 else 0)
