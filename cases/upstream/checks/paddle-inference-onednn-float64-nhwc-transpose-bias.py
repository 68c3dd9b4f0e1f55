"""Paddle Inference (oneDNN): float64 channels-last conv1d/conv2d_transpose with a bias

Runs saved float64 NHWC conv2d_transpose and NLC conv1d_transpose with a bias (3->4, kernel 3, stride 2) through a
CPU predictor, with the controls (switch_ir_optim(False), disable_mkldnn(), NCHW, float32) against a float64
reference. Exit 1 when a valid float64 model is refused (pd_op.conv2d_transpose_bias).
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
shown = False
for what, rank, layout, dtype, kw in [("NHWC, float64", 2, "NHWC", "float64", {}),
                                      ("NLC, float64", 1, "NLC", "float64", {}),
                                      ("NHWC, float64, switch_ir_optim(False)", 2, "NHWC", "float64", {"ir_optim": False}),
                                      ("NHWC, float64, config.disable_mkldnn()", 2, "NHWC", "float64", {"onednn": False}),
                                      ("NCHW, float64", 2, "NCHW", "float64", {}),
                                      ("NHWC, float32", 2, "NHWC", "float32", {})]:
    x_ncl = rng.standard_normal((1, 3, *[5] * rank))
    w = rng.standard_normal((3, 4, *[3] * rank))
    b = rng.standard_normal(4)
    ref = conv_transpose_ref(x_ncl, w, [2] * rank) + b.reshape(1, -1, *[1] * rank)
    last = layout in ("NHWC", "NLC")
    if last:
        x_in, ref = np.moveaxis(x_ncl, 1, -1), np.moveaxis(ref, 1, -1)
    else:
        x_in = x_ncl
    fn = F.conv2d_transpose if rank == 2 else F.conv1d_transpose
    y, err = predict(lambda t, w_, b_, fn=fn, layout=layout: fn(t, w_, b_, stride=2, data_format=layout),
                     [w.astype(dtype), b.astype(dtype)], np.ascontiguousarray(x_in).astype(dtype), **kw)
    head = f"{fn.__name__} 3->4 + bias, kernel 3, stride 2, {what}"
    if err is not None:
        print(f"{head}: refused: {err}")
        shown = True
    else:
        e = np.abs(y - ref).max() if y.shape == ref.shape else np.inf
        print(f"{head}: runs, shape {y.shape} (expected {ref.shape}), max |y - float64 reference| {e:.2g}")
        shown |= bool(e > (1e-9 if dtype == "float64" else 1e-4))
if shown:
    print("defect shown: a valid float64 model is refused")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
