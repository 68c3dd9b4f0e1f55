"""Paddle Inference (oneDNN): grouped conv2d_transpose followed by batch_norm

Runs saved grouped conv2d_transpose -> F.batch_norm (2->4 and 4->4 channels, groups 2) through a CPU predictor,
with switch_ir_optim(False), delete_pass("conv2d_transpose_bn_fuse_pass"), disable_mkldnn(), groups 1 and a
depthwise conv as controls, against a float64 reference. Exit 1 when the fold gives wrong values or is refused.
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
EPS = 1e-5
shown = False
for cin, cout, groups, label, kw in [(2, 4, 2, "", {}), (4, 4, 2, "", {}),
                                     (4, 4, 2, ", switch_ir_optim(False)", {"ir_optim": False}),
                                     (4, 4, 2, ", delete_pass(conv2d_transpose_bn_fuse_pass)",
                                      {"delete_passes": ["conv2d_transpose_bn_fuse_pass"]}),
                                     (4, 4, 2, ", config.disable_mkldnn()", {"onednn": False}),
                                     (4, 4, 1, "", {}), (4, 4, 4, " (depthwise)", {})]:
    x = rng.uniform(-1, 1, (1, cin, 3, 3))
    w = rng.uniform(-1, 1, (cin, cout // groups, 1, 1))
    m, v = rng.uniform(-1, 1, cout), rng.uniform(0.5, 2, cout)
    g, b = rng.uniform(-2, 2, cout), rng.uniform(-1, 1, cout)
    pc = (lambda a: a.reshape(1, -1, 1, 1))
    ref = (conv_transpose_ref(x, w, [1, 1], groups) - pc(m)) / np.sqrt(pc(v) + EPS) * pc(g) + pc(b)
    fwd = (lambda t, w_, m_, v_, g_, b_, groups=groups:  # noqa: E731
           F.batch_norm(F.conv2d_transpose(t, w_, None, groups=groups), m_, v_, weight=g_, bias=b_, training=False,
                        epsilon=EPS))
    y, err = predict(fwd, [a.astype("float32") for a in (w, m, v, g, b)], x.astype("float32"), **kw)
    head = f"conv2d_transpose {cin}->{cout}, groups {groups}{label} -> batch_norm, float32"
    if err is not None:
        print(f"{head}: refused: {err}")
        shown |= not kw
        continue
    e = np.abs(y - ref)
    worst = tuple(int(i) for i in np.unravel_index(e.argmax(), e.shape))
    print(f"{head}: max |y - float64 reference| {e.max():.3g} at {worst} (y {y[worst]:.5f}, expected {ref[worst]:.5f})")
    shown |= bool(e.max() > 1e-4) and not kw
if shown:
    print("defect shown: the batch norm is folded into a grouped conv2d_transpose wrongly")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
