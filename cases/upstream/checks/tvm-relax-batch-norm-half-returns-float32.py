"""Relax nn.batch_norm (inference) on float16, bfloat16 and float32 data: the dtype returned and the legalized PrimFunc

Measures the declared and the returned dtype, the max difference from a float64 reference, and (where the dtype
changes) the buffers of the legalized batch_norm PrimFunc and its epsilon add.
"""
import re
import sys

import ml_dtypes  # TVM's own dependency, for bfloat16 arrays
import numpy as np
import tvm
from tvm import relax

print("tvm", tvm.__version__)
SHAPE, C, EPS = (1, 4, 3, 3), 4, 1e-5
rng = np.random.default_rng(0)
data = [rng.standard_normal(SHAPE)] + [rng.uniform(0.5, 1.5, C) for _ in range(4)]  # x, gamma, beta, mean, var

defect = False
for dtype in ("float16", "bfloat16", "float32"):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(SHAPE, dtype))
    params = [relax.Var(n, relax.TensorType((C,), dtype)) for n in ("gamma", "beta", "mean", "var")]
    with bb.function("main", [x, *params]):
        with bb.dataflow():
            bn = bb.emit(relax.op.nn.batch_norm(x, *params, axis=1, epsilon=EPS, training=False))
            out = bb.emit_output(bb.emit(relax.TupleGetItem(bn, 0)))
        bb.emit_func_output(out)
    mod = bb.get()
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    args = [a.astype(npdt) for a in data]
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    y = vm["main"](*(tvm.runtime.tensor(a) for a in args)).numpy()
    xs, g, b, m, v = (a.astype(np.float64) for a in args)
    ref = (xs - m.reshape(1, C, 1, 1)) / np.sqrt(v.reshape(1, C, 1, 1) + EPS) * g.reshape(1, C, 1, 1) + b.reshape(1, C, 1, 1)
    err = np.abs(y.astype(np.float64) - ref).max()
    declared = mod["main"].ret_ty
    print(f"{dtype:8s}: declared {declared}, returned {y.dtype}; max |y - float64 reference| = {err:.2g}")
    if str(y.dtype) != dtype:
        defect = True
        try:  # where the legalized function shows the promotion (context only)
            legal = relax.transform.LegalizeOps()(mod)
            for gv, func in legal.functions.items():
                if "batch_norm" in gv.name_hint:
                    text = func.script()
                    sig = next((ln for ln in text.splitlines() if ln.lstrip().startswith("def ")), "")
                    bufs = re.findall(r'(\w+): T\.Buffer\(\((?:[^()]|\([^()]*\))*\), "(\w+)"\)', sig)
                    eps = [ln.strip().split("= ", 1)[1] for ln in text.splitlines() if "T.float32(1" in ln]
                    print(f"          legalized {gv.name_hint}: buffers " + ", ".join(f"{n} {t}" for n, t in bufs))
                    print(f"          epsilon add: {eps[0] if eps else '(not found)'}")
        except Exception as exc:  # noqa: BLE001
            print(f"          (legalized function not shown: {type(exc).__name__})")
print("DEFECT: batch_norm changes float16/bfloat16 to float32" if defect else "dtypes kept")
sys.exit(1 if defect else 0)
