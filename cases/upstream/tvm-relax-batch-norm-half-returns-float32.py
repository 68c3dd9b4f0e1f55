"""[Relax] nn.batch_norm (inference) on float16/bfloat16 data returns float32: LegalizeOps promotes it through epsilon

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/pull/3260 (the same fix in Relay: epsilon cast to the data dtype); https://github.com/apache/tvm/issues/19574 (LegalizeOps batch_norm mode); https://github.com/apache/tvm/pull/19979 (ONNX BatchNormalization parameters cast to the data dtype)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, searched apache/tvm issues and PRs for "batch_norm float16 output float32", "relax batch_norm epsilon dtype", "batch_norm bfloat16 legalize"

What happens: relax.op.nn.batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=1e-5, training=False) with x and the four parameters in float16 is typed as returning R.Tensor(..., "float16"), but the compiled module returns a float32 tensor; the same for bfloat16; float32 is unaffected. After LegalizeOps the call_tir's output is declared float32 and the batch_norm PrimFunc computes with a T.float32 epsilon constant. Every later op then runs in float32, and an op that combines the result with a float16/bfloat16 constant (a second batch_norm, a multiply) fails type checking ("Binary operators must have the same datatype for both operands"). The ONNX importer maps BatchNormalization to this op, so a float16 Conv -> BatchNormalization model returns float32 too.

Expected: the output has the input dtype, as the op's own type inference says and as PyTorch/ONNX BatchNormalization define (output dtype = input dtype). The script checks the dtype and the values against a float64 NumPy (x - mean) / sqrt(var + eps) * gamma + beta.

Mechanism: python/tvm/relax/transform/legalize_ops/nn.py _nn_batch_norm passes call.attrs.epsilon (a Python float) to topi.nn.batch_norm, whose inference branch computes (data - moving_mean) / sqrt(moving_var + epsilon) (python/tvm/topi/nn/batch_norm.py); a float16 tensor plus a Python float becomes float32 in TE, which promotes the whole output. Relay fixed the same thing by making the epsilon constant in the data dtype (PR #3260); here tvm.tir.const(epsilon, data.dtype) in topi.nn.batch_norm (or in the legalization) would.

Host: any
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
