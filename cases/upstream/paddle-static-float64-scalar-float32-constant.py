"""Paddle's static graph (paddle.jit.to_static / paddle.jit.save, PIR) applies a Python float to a float64 tensor
as float32: `x * c` becomes pd_op.scale(x, pd_op.full(dtype=float32, value=c)) and `x + c` a scale whose `bias`
attribute is a 32-bit float. Eager paddle uses the double. So a float64 model loses c's low bits: in to_static,
in a jit.save'd model run by paddle.inference (oneDNN on or off, IR optimization on or off)."""
import os
import tempfile

import numpy as np
import paddle
from paddle.static import InputSpec

paddle.set_device("cpu")
C = -1.5976613489440372
x = np.array([1.0, -2.0, 3.0, 10.0])


def times_c(t):
    return t * C


def plus_c(t):
    return t + C


print("paddle", paddle.__version__)
for name, fn, exact, c32 in [("x * c", times_c, x * C, x * float(np.float32(C))),
                             ("x + c", plus_c, x + C, x + float(np.float32(C)))]:
    eager = fn(paddle.to_tensor(x)).numpy()
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([4], "float64", name="x")], full_graph=True)
    y = static(paddle.to_tensor(x)).numpy()
    ops = [ln.split("=", 1)[1].strip()[:110] for ln in str(static.concrete_program.main_program).splitlines()
           if '"pd_op.full"' in ln or '"pd_op.scale"' in ln]
    print(f"{name}, float64: eager max|y - exact| {np.abs(eager - exact).max():.3g}; to_static {np.abs(y - exact).max():.3g} "
          f"(= with float32(c): {np.abs(y - c32).max():.3g})")
    for op in ops:
        print("   ", op)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([1], dtype="float64", default_initializer=paddle.nn.initializer.Constant(1.0))

        def forward(self, t):
            return fn(t * self.w)

    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(Net(), os.path.join(tmp, "m"), input_spec=[InputSpec([4], "float64", name="x")])
        for onednn, ir in [(True, True), (False, True), (True, False)]:
            cfg = paddle.inference.Config(os.path.join(tmp, "m.json"), os.path.join(tmp, "m.pdiparams"))
            cfg.disable_gpu()
            cfg.switch_ir_optim(ir)
            cfg.disable_glog_info()
            if not onednn:
                cfg.disable_mkldnn()
            p = paddle.inference.create_predictor(cfg)
            p.get_input_handle("x").copy_from_cpu(x)
            p.run()
            y = p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
            print(f"    paddle.inference (oneDNN {'on' if onednn else 'off'}, ir_optim {'on' if ir else 'off'}): "
                  f"max|y - exact| {np.abs(y - exact).max():.3g}, max|y - with float32(c)| {np.abs(y - c32).max():.3g}")
