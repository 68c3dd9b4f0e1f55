"""Short bfloat16 Relax convolution sums with out_dtype unset: the running sum rounded to bfloat16 after every add

Measures x = [256, 1, 1, 1, 1, 1] over 6 channels (256, not 261) and the error against the float32-accumulation bound.
"""
import sys

import ml_dtypes  # TVM's own dependency, for bfloat16 arrays
import numpy as np
import tvm
from tvm import relax

print("tvm", tvm.__version__, "| target llvm on", tvm.target.codegen.llvm_get_system_cpu())
T, U_T = ml_dtypes.bfloat16, 2.0 ** -8


def run_op(op, x: np.ndarray, w: np.ndarray, **attrs) -> np.ndarray:
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType(x.shape, "bfloat16"))
    with bb.function("main", [xv]):
        bb.emit_func_output(bb.emit(op(xv, relax.const(w, "bfloat16"), **attrs)))
    vm = relax.VirtualMachine(tvm.compile(bb.get(), target="llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy()


def bound(exact: float, scale: float, k: int) -> float:
    return (k + 2) * 2.0 ** -24 * scale + U_T * (scale + abs(exact))


defect = False
# 1. a short sum whose first product is large: the bfloat16 running sum drops every later 1
x = np.array([256, 1, 1, 1, 1, 1], T).reshape(1, 6, 1)
exact = 261.0
for name, op, w in (("conv1d", relax.op.nn.conv1d, np.ones((1, 6, 1), T)),
                    ("conv1d_transpose", relax.op.nn.conv1d_transpose, np.ones((6, 1, 1), T))):
    got = float(run_op(op, x, w).item())
    b = bound(exact, exact, 6)
    print(f"{name}, 6 channels, kernel 1, x = {x.ravel().tolist()}, w = 1 (K = 6): expected {exact:g} "
          f"({float(T(exact)):g} in bfloat16), got {got:g}; error/bound {abs(got - exact) / b:.2f}")
    defect = defect or abs(got - exact) > b

# 2. random data: TVM equals a bfloat16 running sum of float32 products, step by step (data-dependent whether it exceeds the bound)
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
            acc = T(np.float32(acc) + np.float32(xr[0, c, i + a, j + b]) * np.float32(wr[o, c, a, b]))
        emul[0, o, i, j] = acc
        win = xr[0, :, i:i + 3, j:j + 3].astype(np.float64)
        ref[0, o, i, j] = np.sum(win * wr[o].astype(np.float64))
        scale[0, o, i, j] = np.sum(np.abs(win * wr[o].astype(np.float64)))
    k = cin * 9
    ratio = np.abs(y - ref) / ((k + 2) * 2.0 ** -24 * scale + U_T * (scale + np.abs(ref)))
    print(f"conv2d {cin}->3, 3x3, normal data (K = {k}): equal to the bfloat16 step-by-step emulation bit for bit: "
          f"{bool(np.array_equal(y, emul))}; max error/bound {ratio.max():.2f}")

print("DEFECT: bfloat16 convolution accumulates in bfloat16" if defect else "accumulates in float32")
sys.exit(1 if defect else 0)
