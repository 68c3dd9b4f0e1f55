"""Relax nn.batch_norm (inference, training=False) on float16/bfloat16 data returns float32.

The function's declared result is R.Tensor(..., "float16"); the compiled module returns a
float32 tensor (apache-tvm 0.27.0, llvm). Expected: float16 (like every other elementwise op).
"""
import numpy as np
import tvm
from tvm import relax

for dtype in ("float16", "bfloat16", "float32"):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 4, 3, 3), dtype))
    g, b, m, v = (relax.Var(n, relax.TensorType((4,), dtype)) for n in ("gamma", "beta", "mean", "var"))
    with bb.function("main", [x, g, b, m, v]):
        with bb.dataflow():
            bn = bb.emit(relax.op.nn.batch_norm(x, g, b, m, v, axis=1, epsilon=1e-5, training=False))
            out = bb.emit_output(bb.emit(relax.TupleGetItem(bn, 0)))
        bb.emit_func_output(out)
    mod = bb.get()
    declared = str(mod["main"]).split(") -> ")[1].split(":\n")[0]
    if dtype == "bfloat16":
        import ml_dtypes
        npdt = ml_dtypes.bfloat16
    else:
        npdt = dtype
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((1, 4, 3, 3)).astype(npdt)] + [rng.uniform(0.5, 1.5, 4).astype(npdt) for _ in range(4)]
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    y = vm["main"](*(tvm.runtime.tensor(a) for a in args)).numpy()
    print(f"{dtype}: declared {declared}, returned {y.dtype}", "OK" if str(y.dtype) == dtype else "WRONG DTYPE")
    if str(y.dtype) != dtype:
        import re
        legal = relax.transform.LegalizeOps()(mod)
        for gv, f in legal.functions.items():
            if "batch_norm" in gv.name_hint:
                print("  legalized", gv.name_hint, "buffers:", sorted(set(re.findall(r'T\.Buffer\(\([^)]*\), "(\w+)"\)', f.script()))),
                      "| float32 consts:", sorted(set(re.findall(r"T\.float32\([^)]*\)", f.script()))))
