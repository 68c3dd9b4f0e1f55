"""paddle.inference (CPU, oneDNN on by default), float64: an activation that directly follows an
elementwise add or multiply is silently dropped. A saved layer computing relu(x + c) returns x + c;
tanh(x + c) and relu(x * c) likewise. No convolution is needed; in a conv model it shows as
conv -> shift/residual/scale/batch_norm/bias -> relu/tanh/sigmoid/... giving the un-activated values.
float32 is exact; disable_mkldnn() is exact; switch_ir_optim(False) does not help. paddlepaddle 3.3.1.
Known issue paddle-inference-onednn-float64-transpose-bias-act (convdiff)."""
import tempfile

import numpy as np
import paddle
import paddle.nn.functional as F

paddle.set_device("cpu")
rng = np.random.default_rng(0)
X = rng.standard_normal((1, 4, 5))
C = rng.standard_normal((1, 4, 1))


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
    p = paddle.inference.create_predictor(cfg)
    p.get_input_handle("x").copy_from_cpu(X.astype(dtype))
    p.run()
    return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu().astype(np.float64)


CASES = [
    ("relu(x + c)", lambda x, c: F.relu(x + c), np.maximum(X + C, 0), X + C),
    ("tanh(x + c)", lambda x, c: paddle.tanh(x + c), np.tanh(X + C), X + C),
    ("sigmoid(x + c)", lambda x, c: F.sigmoid(x + c), 1 / (1 + np.exp(-(X + C))), X + C),
    ("relu(x * c)", lambda x, c: F.relu(x * c), np.maximum(X * C, 0), X * C),
    ("relu(x)", lambda x, c: F.relu(x), np.maximum(X, 0), X),
]
bad = False
for dtype in ("float64", "float32"):
    for mode in ("default", "no_ir_optim", "disable_mkldnn"):
        for name, fn, ref, unactivated in CASES:
            y = predict(fn, dtype, mode)
            err = np.abs(y - ref).max()
            dropped = np.abs(y - unactivated).max() < 1e-6
            print(f"{dtype:8s} {mode:15s} {name:15s} max |err| {err:.3g}"
                  + ("  <- equals the input of the activation: activation dropped" if dropped and err > 1e-6 else ""))
            bad |= err > (1e-12 if dtype == "float64" else 1e-6)
print("BUG reproduced" if bad else "not reproduced")
