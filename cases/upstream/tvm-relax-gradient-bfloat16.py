"""[Relax] transform.Gradient refuses bfloat16 functions: "The differentiation target must be a float scalar"

Kind: valid-refused
Ask: a feature: count bfloat16 (and the other float codes) as floating point in Gradient's eligibility check, as float16 already is.

What happens: Taking relax.transform.Gradient of a function computing sum(R.nn.conv2d(x, w)) with bfloat16 x and w fails: "The differentiation target must be a float scalar (0-dim Tensor), but the Type of the given target gv is R.Tensor((), dtype="bfloat16")"; with a float32 target the bfloat16 parameters are refused next ("Only Tensors of floating point dtype or Tuples of float Tensors can require gradients"). The same function in float16 or float32 gets its adjoint. bfloat16 is what mixed-precision training commonly uses, and R.nn.conv2d itself accepts it.

Expected: the adjoint function, as for float16 (bfloat16 is a floating-point dtype: https://tvm.apache.org/docs/reference/api/python/runtime/runtime.html#tvm.runtime.DataType).

Mechanism: src/relax/transform/gradient.cc, IsFloatTensorType (lines 719-724, main 5d4dc87, used by the checks at lines 753 and 776), accepts only dtypes whose code is kDLFloat; bfloat16 has its own code, kDLBfloat.
"""
import sys
import tvm
from tvm import relax
from tvm.script import relax as R
print("tvm", tvm.__version__)
for dtype in ("float16", "bfloat16"):
    x, w = relax.Var("x", R.Tensor((1, 1, 3, 3), dtype)), relax.Var("w", R.Tensor((1, 1, 3, 3), dtype))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit_output(bb.emit(relax.op.sum(relax.op.nn.conv2d(x, w))))
        bb.emit_func_output(y)
    try:
        result = "adjoint built: " + ", ".join(gv.name_hint for gv in relax.transform.Gradient("main")(bb.get()).functions)
    except Exception as exc:  # the refusal
        result = str(exc).strip().splitlines()[-1][:260]
    print(dtype, "->", result)
sys.exit(0 if result.startswith("adjoint") else 1)
