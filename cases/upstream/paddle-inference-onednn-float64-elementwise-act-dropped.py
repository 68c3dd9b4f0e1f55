"""Paddle Inference (oneDNN): a float64 relu(x + c) returns x + c (elementwise_act_onednn_fuse_pass drops the activation)

Project: PaddlePaddle/Paddle (https://github.com/PaddlePaddle/Paddle/issues)
Upstream: none found
Related: https://github.com/PaddlePaddle/Paddle/pull/63516 (PIR elementwise_act_onednn_fuse_pass); https://github.com/PaddlePaddle/Paddle/issues/47357 (a float64 model meeting a oneDNN fuse pass)
Checked: 2026-11-28, paddlepaddle 3.3.1 (CPU), searched PaddlePaddle/Paddle issues for "elementwise_act_onednn_fuse_pass float64", "float64 relu dropped inference mkldnn", "fused_elementwise_add fuse_activation float64"

What happens: the minimal form of the defect behind conv_transpose + bias + relu going wrong in float64 Paddle
Inference models (a separate report shows it through a conv). A paddle.jit.save'd float64 layer computing
F.relu(x + c) (c a (1, 4, 1) parameter), run by a CPU paddle.inference predictor with oneDNN on (the default),
returns x + c exactly: 2.99 away from the float64 reference. tanh(x + c) and sigmoid(x + c) return x + c, relu(x * c)
returns x * c. No error, no warning. The same with switch_ir_optim(False); right with
config.delete_pass("elementwise_act_onednn_fuse_pass"), with config.disable_mkldnn(), in float32, and for relu(x).

Expected: relu(x + c) (tanh, sigmoid, relu(x * c)), as eager paddle and the float32 model give; the reference here is
the same expression in float64 NumPy.

Mechanism: elementwise_act_onednn_fuse_pass (PR 63516) fuses the add/multiply and the activation into onednn_op
fused_elementwise_add/mul with fuse_activation set; deleting that pass restores the activation. oneDNN has no float64
elementwise kernel, so the float64 fused op runs on a kernel that, as measured, computes the elementwise op and
ignores fuse_activation; which kernel that is was not traced.

Host: Paddle Inference with oneDNN on (Config.mkldnn_enabled(): the CPU default of the x86 wheel in 3.3.1).
"""
import os
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
warnings.filterwarnings("ignore", message="no variable in your model")  # relu(x) below holds no parameter
import paddle
import paddle.nn.functional as F
from paddle.static import InputSpec


def error_line(exc):
    """Paddle's error in one line (its message carries a C++ stack or "In user code:" first)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    hits = [ln for ln in lines if "Error" in ln or "Fatal" in ln or "PreconditionNotMet" in ln]
    return (hits or lines or [type(exc).__name__])[0][:240]


def predict(forward, params, x, onednn=True, ir_optim=True, delete_passes=()):
    """forward(x, *params) in a paddle.nn.Layer holding params as parameters, paddle.jit.save'd and run by a CPU
    paddle.inference predictor. Returns (output, None), or (None, the error in one line) where Paddle refuses it."""
    dtype = str(x.dtype)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.p = paddle.nn.ParameterList([
                self.create_parameter(list(a.shape), dtype=dtype, default_initializer=paddle.nn.initializer.Assign(a))
                for a in params])

        def forward(self, t):
            return forward(t, *self.p)

    with tempfile.TemporaryDirectory() as tmp:
        try:
            paddle.jit.save(Net(), os.path.join(tmp, "model"), input_spec=[InputSpec(list(x.shape), dtype, name="x")])
        except Exception as exc:  # not expected: said in one line rather than a traceback
            return None, "paddle.jit.save failed: " + error_line(exc)
        cfg = paddle.inference.Config(os.path.join(tmp, "model.json"), os.path.join(tmp, "model.pdiparams"))
        cfg.disable_gpu()
        cfg.disable_glog_info()
        cfg.switch_ir_optim(ir_optim)
        if not onednn:
            cfg.disable_mkldnn()
        for name in delete_passes:
            cfg.delete_pass(name)
        try:
            p = paddle.inference.create_predictor(cfg)
            p.get_input_handle("x").copy_from_cpu(x)
            p.run()
            return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu(), None
        except Exception as exc:  # a refused model is reported, not raised
            return None, error_line(exc)


paddle.set_device("cpu")
probe = paddle.inference.Config()
probe.disable_gpu()
ONEDNN = bool(probe.mkldnn_enabled())
print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}); CPU predictor oneDNN by default: {ONEDNN} "
      f"(Config.mkldnn_enabled()); AVX-512F: {paddle.base.core.supports_avx512f()}")
rng = np.random.default_rng(0)
X = rng.standard_normal((1, 4, 5))
C = rng.standard_normal((1, 4, 1))
# (what, forward, params, input, activated reference, the activation's input)
CASES = [
    ("relu(x + c)", lambda t, c: F.relu(paddle.add(t, c)), [C], X, np.maximum(X + C, 0), X + C),
    ("tanh(x + c)", lambda t, c: paddle.tanh(paddle.add(t, c)), [C], X, np.tanh(X + C), X + C),
    ("sigmoid(x + c)", lambda t, c: F.sigmoid(paddle.add(t, c)), [C], X, 1 / (1 + np.exp(-(X + C))), X + C),
    ("relu(x * c)", lambda t, c: F.relu(paddle.multiply(t, c)), [C], X, np.maximum(X * C, 0), X * C),
    ("relu(x)", lambda t, c: F.relu(t), [C], X, np.maximum(X, 0), X),
]
shown = False
for what, fwd, params, x, ref, before in CASES:
    first = what == "relu(x + c)"
    for label, dtype, kw in [("float64", "float64", {}),
                             ("float64, switch_ir_optim(False)", "float64", {"ir_optim": False}),
                             ("float64, delete_pass(elementwise_act_onednn_fuse_pass)", "float64", {"delete": True}),
                             ("float64, config.disable_mkldnn()", "float64", {"onednn": False}),
                             ("float32", "float32", {})][:None if first else 1]:
        if kw.pop("delete", False):
            kw["delete_passes"] = ["elementwise_act_onednn_fuse_pass"]
        y, err = predict(fwd, [p.astype(dtype) for p in params], x.astype(dtype), **kw)
        if err is not None:
            print(f"{what}, {label}: refused: {err}")
            continue
        e = np.abs(y - ref).max()
        dropped = np.abs(y - before).max()
        print(f"{what}, {label}: max |y - float64 reference| {e:.3g}; max |y - the activation's input| {dropped:.2g}"
              + ("  <- activation dropped" if e > 1e-6 and dropped < 1e-6 else ""))
        shown |= dtype == "float64" and e > 1e-9 and not kw
if shown:
    print("defect shown: the float64 activation is dropped")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
