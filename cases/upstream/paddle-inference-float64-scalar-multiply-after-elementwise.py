"""paddle.inference (CPU, oneDNN on by default), float64: a multiply by a Python scalar that directly follows an
elementwise op (multiply, divide or add of a tensor) is silently dropped. A saved layer computing (x * c) * s
returns x * c. No convolution is needed; in a conv model it shows as conv -> scale/divide/shift/residual/bias
add -> * s giving the unscaled values. config.delete_pass("operator_scale_onednn_fuse_pass") or disable_mkldnn()
fixes it (leaving s rounded to float32: paddle-static-float64-scalar-float32-constant); switch_ir_optim(False)
does not; float32 is right. Sibling of #47357 (a float64 elementwise op, run by Paddle's own kernel, fused with
what follows by a oneDNN pass). paddlepaddle 3.3.1. Known issue paddle-inference-float64-scalar-multiply-after-elementwise (convdiff)."""
import tempfile

import numpy as np
import paddle

paddle.set_device("cpu")
rng = np.random.default_rng(0)
X, C, S = rng.standard_normal((1, 4, 5)), rng.standard_normal((1, 4, 1)) + 2.0, -1.9897383434752216


def predict(fn, dtype, mode):
    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.register_buffer("c", paddle.to_tensor(C.astype(dtype)))

        def forward(self, x):
            return fn(x, self.c)

    d = tempfile.mkdtemp()
    paddle.jit.save(Net(), d + "/model", input_spec=[paddle.static.InputSpec([1, 4, 5], dtype, name="x")])
    cfg = paddle.inference.Config(d + "/model.json", d + "/model.pdiparams")
    cfg.disable_gpu(); cfg.disable_glog_info(); cfg.switch_ir_optim(mode != "no_ir_optim")
    if mode == "disable_mkldnn":
        cfg.disable_mkldnn()
    if mode == "delete_pass":
        cfg.delete_pass("operator_scale_onednn_fuse_pass")
    p = paddle.inference.create_predictor(cfg)
    p.get_input_handle("x").copy_from_cpu(X.astype(dtype))
    p.run()
    return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu().astype(np.float64)


CASES = [("(x * c) * s", lambda x, c: (x * c) * S, X * C),
         ("(x / c) * s", lambda x, c: (x / c) * S, X / C),
         ("(x + c) * s", lambda x, c: (x + c) * S, X + C)]
bad = False
for dtype in ("float64", "float32"):
    for mode in ("default", "no_ir_optim", "disable_mkldnn", "delete_pass"):
        for name, fn, unscaled in CASES:
            y = predict(fn, dtype, mode)
            err = np.abs(y - unscaled * S).max()
            dropped = np.abs(y - unscaled).max() < 1e-6
            print(f"{dtype:8s} {mode:15s} {name:12s} max |err| {err:.3g}"
                  + ("  <- equals the input of the multiply: scalar dropped" if dropped else ""))
            bad |= err > 1e-6 * np.abs(unscaled * S).max()
print("BUG reproduced" if bad else "not reproduced")
