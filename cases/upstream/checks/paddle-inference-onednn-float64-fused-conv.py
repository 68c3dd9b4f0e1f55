"""Paddle Inference (oneDNN): float64 conv with a bias or a following activation or batch norm

Runs saved float64 NCHW conv2d/NCL conv1d/NCDHW conv3d with a bias, conv2d -> relu and conv2d -> batch_norm (3->4,
kernel 3) through a CPU predictor, oneDNN on, with switch_ir_optim(False), with config.disable_mkldnn() and in
float32, against a float64 reference: refused (pd_op.fused_conv2d/3d, the float32 batch-norm fold) or the error.
Exit 1 when a valid float64 model is refused.
"""
import os
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
import paddle
import paddle.nn.functional as F
from paddle.static import InputSpec


def conv_ref(x, w):
    """float64 cross-correlation, NC* layout, w (O, I, *k), no padding, stride 1."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    k = w.shape[2:]
    out = [n - kk + 1 for n, kk in zip(x.shape[2:], k)]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*k):
        win = tuple(slice(t, t + m) for t, m in zip(tap, out))
        y += np.einsum("nc...,oc->no...", x[(slice(None), slice(None), *win)], w[(slice(None), slice(None), *tap)])
    return y


def error_line(exc):
    """Paddle's error in one line (its message carries a C++ stack or "In user code:" first)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    hits = [ln for ln in lines if "Error" in ln or "Fatal" in ln or "PreconditionNotMet" in ln]
    return (hits or lines or [type(exc).__name__])[0][:240]


def predict(forward, params, x, onednn=True, ir_optim=True):
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
EPS = 1e-5
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def per_channel(v, rank):
    return v.reshape(1, -1, *[1] * rank)


def bn(t, m, v, g, b):
    return F.batch_norm(t, m, v, weight=g, bias=b, training=False, epsilon=EPS)


# (what, rank, forward(t, w, *extra), extra params, reference(conv output, *extra), dtype, predictor options)
CASES = [
    ("conv2d + bias, NCHW", 2, lambda t, w, b: F.conv2d(t, w, b), ["b"], lambda y, b: y + per_channel(b, 2)),
    ("conv1d + bias, NCL", 1, lambda t, w, b: F.conv1d(t, w, b), ["b"], lambda y, b: y + per_channel(b, 1)),
    ("conv3d + bias, NCDHW", 3, lambda t, w, b: F.conv3d(t, w, b), ["b"], lambda y, b: y + per_channel(b, 3)),
    ("conv2d -> relu, NCHW", 2, lambda t, w: F.relu(F.conv2d(t, w)), [], lambda y: np.maximum(y, 0)),
    ("conv2d -> batch_norm, NCHW", 2, lambda t, w, m, v, g, b: bn(F.conv2d(t, w), m, v, g, b), ["m", "v", "g", "b"],
     lambda y, m, v, g, b: (y - per_channel(m, 2)) / np.sqrt(per_channel(v, 2) + EPS) * per_channel(g, 2) + per_channel(b, 2)),
    ("conv2d alone, NCHW", 2, lambda t, w: F.conv2d(t, w), [], lambda y: y),
]
shown = False
for what, rank, fwd, names, reference in CASES:
    x = rng.standard_normal((1, 3, *[5] * rank))
    w = rng.standard_normal((4, 3, *[3] * rank))
    extra = [rng.uniform(0.5, 2.0, 4) if n == "v" else rng.standard_normal(4) for n in names]
    ref = reference(conv_ref(x, w), *[per_channel(e, rank).ravel() for e in extra])
    settings = [("float64", {}), ("float64, switch_ir_optim(False)", {"ir_optim": False}),
                ("float64, config.disable_mkldnn()", {"onednn": False}), ("float32", {})]
    chosen = settings[:1] if what == "conv2d alone, NCHW" else settings if what.startswith("conv2d + bias") else settings[::2]
    for label, kw in chosen:
        dtype = "float32" if label == "float32" else "float64"
        y, err = predict(fwd, [w.astype(dtype), *[e.astype(dtype) for e in extra]], x.astype(dtype), **kw)
        head = f"{what} (3->4, kernel 3), {label}"
        if err is not None:
            print(f"{head}: refused: {err}")
            shown |= dtype == "float64" and "disable_mkldnn" not in label
            continue
        e = np.abs(y - ref).max() if y.shape == ref.shape else np.inf
        print(f"{head}: runs, max |y - float64 reference| {e:.2g}")
if shown:
    print("defect shown: valid float64 models are refused")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
