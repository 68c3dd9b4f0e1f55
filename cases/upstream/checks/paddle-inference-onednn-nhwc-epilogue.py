"""Paddle Inference (oneDNN): NHWC conv2d followed by elementwise ops

Runs saved NHWC conv2d -> multiply by a (1, 1, 1, C) vector -> relu and NHWC conv2d -> divide -> add -> leaky_relu
through a CPU predictor, with switch_ir_optim(False) and disable_mkldnn() as controls, against a float64
reference. Exit 1 when a valid NHWC model is refused or returns the wrong shape.
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
X = rng.standard_normal((1, 5, 5, 4)).astype("float32")
W = rng.standard_normal((4, 4, 3, 3)).astype("float32")  # (O, I, kh, kw): Paddle's filter layout for NHWC too
S = np.arange(1, 5, dtype="float32").reshape(1, 1, 1, 4)
D = rng.uniform(1, 2, (1, 1, 1, 4)).astype("float32")
C = rng.standard_normal((1, 1, 1, 4)).astype("float32")
conv = np.zeros((1, 3, 3, 4))
for i, j in np.ndindex(3, 3):
    conv += np.einsum("nhwc,oc->nhwo", X[:, i:i + 3, j:j + 3, :].astype(np.float64), W[:, :, i, j].astype(np.float64))
CASES = [
    ("conv2d NHWC -> multiply by (1, 1, 1, 4) -> relu",
     lambda t, w, s: F.relu(paddle.multiply(F.conv2d(t, w, data_format="NHWC"), s)), [W, S], np.maximum(conv * S, 0)),
    ("conv2d NHWC -> divide -> add -> leaky_relu",
     lambda t, w, d, c: F.leaky_relu(paddle.add(paddle.divide(F.conv2d(t, w, data_format="NHWC"), d), c), 0.1),
     [W, D, C], np.where(conv / D + C > 0, conv / D + C, 0.1 * (conv / D + C))),
]
shown = False
for what, fwd, params, ref in CASES:
    for label, kw in [("default Config", {}), ("switch_ir_optim(False)", {"ir_optim": False}),
                      ("config.disable_mkldnn()", {"onednn": False})]:
        y, err = predict(fwd, params, X, **kw)
        if err is not None:
            print(f"{what}, {label}: refused: {err}")
            shown |= "onednn" not in kw
        elif y.shape != ref.shape:
            print(f"{what}, {label}: shape {y.shape}, expected {ref.shape}")
            shown |= "onednn" not in kw
        else:
            e = np.abs(y - ref).max()
            print(f"{what}, {label}: shape {y.shape}, max |y - float64 reference| {e:.2g}")
            shown |= bool(e > 1e-4) and "onednn" not in kw
if shown:
    print("defect shown: the NHWC model fails with oneDNN")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
