"""[Relax][TOPI] float16 convolutions round the running sum to float16 after every product, even for short sums (K < 24)

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/pull/1356 (out_dtype added to conv2d for mixed precision); https://github.com/apache/tvm/issues/8296 (mixed-precision tracking issue: accumulation dtypes); https://github.com/uxlfoundation/oneDNN/pull/5041 (oneDNN moved its f16 GPU convolutions to an f32 accumulator for accuracy)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, searched apache/tvm issues and PRs for "conv2d float16 accumulation precision", "float16 conv out_dtype accumulate float32", "conv_transpose float16 accuracy"

What happens: with out_dtype unset, a float16 relax.op.nn.conv* computes in float16 arithmetic: each product is rounded to float16 and added to a float16 running sum (channels outer, taps inner), rounding after every add. A NumPy emulation of exactly that reproduces TVM's output bit for bit (conv2d, 1 and 2 channels, 3x3, random normal data, printed below). Even a short sum then leaves the error a float32 accumulation would have: a conv1d over 6 channels (K = 6, kernel 1, weights 1) of x = [2048, 1, 1, 1, 1, 1] returns 2048 (each 2048 + 1 rounds back to 2048) where the exact sum is 2053 (2052 in float16), 2.5x the float32-accumulation bound; conv1d_transpose of the same 6 channels returns 2048 too. On random data a short float16 sum passes or fails with the values: convdiff measured 1.03-1.21x on some seed-27 fuzz cases with K = 6, 9 and 18 and passes elsewhere.

Expected: accumulation in float32 with one rounding to float16 at the end (PyTorch, ONNX Runtime, oneDNN), i.e. an error within (K + 2) * 2^-24 * (|x| * |w|) + 2^-11 * (|x| * |w| + |y|) of the exact float64 NumPy sum, which the script computes.

Mechanism: python/tvm/topi/nn/conv1d.py/conv2d.py and conv1d_transpose.py: te.sum(data.astype(out_dtype) * kernel.astype(out_dtype)) with out_dtype = float16 when Relax's out_dtype is unset (relax legalize_ops/nn.py passes call.ty.dtype); the reduction's accumulator is a float16 buffer. The ONNX importer (python/tvm/relax/frontend/onnx/onnx_frontend.py Conv, ConvTranspose) sets no out_dtype either.

Host: any
"""
import sys

import numpy as np
import tvm
from tvm import relax

print("tvm", tvm.__version__, "| target llvm on", tvm.target.codegen.llvm_get_system_cpu())
T, U_T = np.float16, 2.0 ** -11


def run_op(op, x: np.ndarray, w: np.ndarray, **attrs) -> np.ndarray:
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType(x.shape, "float16"))
    with bb.function("main", [xv]):
        bb.emit_func_output(bb.emit(op(xv, relax.const(w, "float16"), **attrs)))
    vm = relax.VirtualMachine(tvm.compile(bb.get(), target="llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy()


def bound(exact: float, scale: float, k: int) -> float:
    return (k + 2) * 2.0 ** -24 * scale + U_T * (scale + abs(exact))


defect = False
# 1. a short sum whose first product is large: the float16 running sum drops every later 1
x = np.array([2048, 1, 1, 1, 1, 1], T).reshape(1, 6, 1)
exact = 2053.0
for name, op, w in (("conv1d", relax.op.nn.conv1d, np.ones((1, 6, 1), T)),
                    ("conv1d_transpose", relax.op.nn.conv1d_transpose, np.ones((6, 1, 1), T))):
    got = float(run_op(op, x, w).item())
    b = bound(exact, exact, 6)
    print(f"{name}, 6 channels, kernel 1, x = {x.ravel().tolist()}, w = 1 (K = 6): expected {exact:g} "
          f"({float(T(exact)):g} in float16), got {got:g}; error/bound {abs(got - exact) / b:.2f}")
    defect = defect or abs(got - exact) > b

# 2. random data: TVM equals float16 arithmetic step by step (data-dependent whether it exceeds the bound)
rng = np.random.default_rng(0)
for cin in (1, 2):
    xr = rng.standard_normal((1, cin, 6, 6)).astype(T)
    wr = rng.standard_normal((3, cin, 3, 3)).astype(T)
    y = run_op(relax.op.nn.conv2d, xr, wr).astype(np.float64)
    emul = np.zeros_like(y)
    ref = np.zeros_like(y)
    scale = np.zeros_like(y)
    for o, i, j in np.ndindex(*y.shape[1:]):
        acc = T(0)
        for c, a, b in np.ndindex(cin, 3, 3):  # channels outer, taps inner, as TOPI's reduction
            acc = T(acc + T(xr[0, c, i + a, j + b] * wr[o, c, a, b]))
        emul[0, o, i, j] = acc
        win = xr[0, :, i:i + 3, j:j + 3].astype(np.float64)
        ref[0, o, i, j] = np.sum(win * wr[o].astype(np.float64))
        scale[0, o, i, j] = np.sum(np.abs(win * wr[o].astype(np.float64)))
    k = cin * 9
    ratio = np.abs(y - ref) / ((k + 2) * 2.0 ** -24 * scale + U_T * (scale + np.abs(ref)))
    print(f"conv2d {cin}->3, 3x3, normal data (K = {k}): equal to the float16 step-by-step emulation bit for bit: "
          f"{bool(np.array_equal(y, emul))}; max error/bound {ratio.max():.2f}")

print("DEFECT: float16 convolution accumulates in float16" if defect else "accumulates in float32")
sys.exit(1 if defect else 0)
