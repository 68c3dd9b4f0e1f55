"""[PIR] float64 x * c and x + c with a Python float c compute with float32(c) under to_static and in saved models

Kind: wrong-value
Ask: a fix: keep the scalar in double precision for float64 inputs, as eager mode does.

What happens: for a float64 x = 1.0, eager Paddle gives x * 0.1 = 0.1 and x + 0.1 = 1.1; paddle.jit.to_static gives 0.10000000149011612 and 1.1000000014901161, the results with float32(0.1). The same in a saved model run by paddle.inference, oneDNN on or off.

Expected: the eager (and NumPy float64) result.

Mechanism: python/paddle/pir/math_op_patch.py turns x * c and x + c into paddle.scale(x, c, 0.0) and paddle.scale(x, 1.0, c), in the program pd_op.scale(x, pd_op.full {dtype: float32, value: c}) with a float32 bias, whatever x's dtype; eager's scale_ad_func keeps the double. PR #75526 notes the difference ("the static IR uses f32") and works around it for dynamic shapes only; PR #65814 fixed the same loss for full and allclose.
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
