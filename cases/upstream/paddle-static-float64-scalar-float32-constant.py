"""[PIR] float64 x * c and x + c with a Python float c compute with float32(c) under to_static and in saved models

Kind: wrong-value
Ask: a fix: keep the scalar in double precision for float64 inputs, as eager mode does.

What happens: For a float64 x = 1.0, to_static gives x * 0.1 = 0.10000000149011612 and x + 0.1 = 1.1000000014901161, the results with float32(0.1); eager gives 0.1 and 1.1. Saved models run by paddle.inference alike.

Expected: the eager result.

Mechanism: python/paddle/pir/math_op_patch.py turns x * c into paddle.scale(x, c), in the program pd_op.scale(x, pd_op.full {dtype: float32}) with a float32 bias, whatever x's dtype. PR #75526 notes it ("the static IR uses f32"); PR #65814 fixed the same loss for full.
"""
import numpy as np
import paddle
print("paddle", paddle.__version__)
def f(x):
    return x * 0.1, x + 0.1
x = paddle.to_tensor(1.0, dtype="float64")
eager = [t.item() for t in f(x)]
static = [t.item() for t in paddle.jit.to_static(f, full_graph=True)(x)]
print("x = 1.0 (float64); x * 0.1, x + 0.1\neager:    ", eager, "\nto_static:", static)
print("float32(0.1) =", float(np.float32(0.1)))
raise SystemExit(0 if static == eager else 1)
