"""Paddle Inference (oneDNN): float64 activations after an elementwise add or multiply

Runs saved float64 relu/sigmoid(conv2d_transpose(x, w, b)), relu(x + c), tanh(x + c), relu(x * c) and relu(x)
through a CPU predictor, with delete_pass("elementwise_act_onednn_fuse_pass"), disable_mkldnn() and float32 as
controls, against a float64 reference and against the activation's input. Exit 1 when the activation is dropped.
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


def conv_transpose_ref(x, w, stride, groups=1):
    """float64 transposed conv, NC* layout, w (C_in, C_out/groups, *k), no padding: each input element scatters
    x * w over the kernel span."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    k, cg, og = w.shape[2:], x.shape[1] // groups, w.shape[1]
    full = [(n - 1) * s + kk for n, s, kk in zip(x.shape[2:], stride, k)]
    y = np.zeros((x.shape[0], og * groups, *full))
    for g in range(groups):
        for tap in np.ndindex(*k):
            win = tuple(slice(t, t + (n - 1) * s + 1, s) for t, n, s in zip(tap, x.shape[2:], stride))
            y[(slice(None), slice(g * og, (g + 1) * og), *win)] += np.einsum(
                "nc...,co->no...", x[:, g * cg:(g + 1) * cg], w[(slice(g * cg, (g + 1) * cg), slice(None), *tap)])
    return y


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
x4 = rng.standard_normal((1, 3, 5, 5))
w4 = rng.standard_normal((3, 4, 3, 3))
b4 = rng.standard_normal(4)
pre = conv_transpose_ref(x4, w4, [1, 1]) + b4.reshape(1, -1, 1, 1)  # float64, before the activation
X = rng.standard_normal((1, 4, 5))
C = rng.standard_normal((1, 4, 1))
sigmoid = (lambda a: 1 / (1 + np.exp(-a)))
# (what, forward, params, input, activated reference, the activation's input)
CASES = [
    ("relu(conv2d_transpose(x, w, b))", lambda t, w, b: F.relu(F.conv2d_transpose(t, w, b)), [w4, b4], x4,
     np.maximum(pre, 0), pre),
    ("sigmoid(conv2d_transpose(x, w, b))", lambda t, w, b: F.sigmoid(F.conv2d_transpose(t, w, b)), [w4, b4], x4,
     sigmoid(pre), pre),
    ("relu(x + c)", lambda t, c: F.relu(paddle.add(t, c)), [C], X, np.maximum(X + C, 0), X + C),
    ("tanh(x + c)", lambda t, c: paddle.tanh(paddle.add(t, c)), [C], X, np.tanh(X + C), X + C),
    ("relu(x * c)", lambda t, c: F.relu(paddle.multiply(t, c)), [C], X, np.maximum(X * C, 0), X * C),
    ("relu(x)", lambda t, c: F.relu(t), [C], X, np.maximum(X, 0), X),
]
shown = False
for what, fwd, params, x, ref, before in CASES:
    first = what.startswith("relu(conv2d_transpose")
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
