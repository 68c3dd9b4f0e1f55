"""Paddle Inference (oneDNN): an NHWC conv followed by an elementwise op sees the conv output in NCHW dims (broadcast error or wrong shape)

Project: PaddlePaddle/Paddle (https://github.com/PaddlePaddle/Paddle/issues)
Upstream: comment for https://github.com/PaddlePaddle/Paddle/issues/43105
Related: https://github.com/PaddlePaddle/Paddle/issues/38126 (the output format of the oneDNN conv with NHWC, closed); https://github.com/PaddlePaddle/Paddle/pull/38387 (fell back to the CPU kernel for NHWC conv then)
Checked: 2026-11-28, paddlepaddle 3.3.1 (CPU), searched PaddlePaddle/Paddle issues for "NHWC mkldnn Broadcast dimension mismatch", "NHWC conv elementwise oneDNN inference", "data_format NHWC predictor wrong shape"

What happens: still present in paddlepaddle 3.3.1 with the PIR predictor (a reproducer for the open issue). A
paddle.jit.save'd layer computing an NHWC F.conv2d (4 -> 4 channels, 3x3, input 1x5x5x4) followed by a multiply by a
(1, 1, 1, 4) vector, run by a CPU paddle.inference predictor with oneDNN on (the default), is refused: "Broadcast
dimension mismatch. Operands could not be broadcast together with the shape of X = [1, 4, 3, 3] and the shape of
Y = [1, 1, 1, 4]": the multiply sees the conv output in oneDNN's NCHW dims. An NHWC conv followed by
divide -> add -> leaky_relu returns shape (1, 3, 4, 3) instead of (1, 3, 3, 4). The same with switch_ir_optim(False);
right with config.disable_mkldnn() and in eager paddle. (Where the last width equals C the shapes broadcast and the
values come out wrong instead.)

Expected: the NHWC model runs and matches eager paddle. The reference here is a float64 NumPy cross-correlation in
NHWC followed by the same elementwise ops.

Mechanism: as jczaja explained in issue 38126, oneDNN kernels keep [N, C, H, W] dims whatever the layout and rotate
back to NHWC only before a non-oneDNN op or the fetch; an elementwise op run by oneDNN after the conv broadcasts its
NHWC-shaped operand against the NCHW dims. Issue 43105 (open since 2022) describes the same in elementwise_op.h.

Host: Paddle Inference with oneDNN on (Config.mkldnn_enabled(): the CPU default of the x86 wheel in 3.3.1).
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
