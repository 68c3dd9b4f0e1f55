"""Paddle Inference: saved conv1d/2d/3d_transpose whose padding crops the whole output

Measures paddle.jit.save'd transposed convolutions with an output length of 0 run by a CPU predictor, oneDNN on
and off: the shape returned, or the error. Exit 1 when a 0-length output is returned.
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
shown = False
for what, fn, xshape, wshape, length in [
        ("conv1d_transpose, input 3, kernel 2, stride 2, padding 3", lambda t, w: F.conv1d_transpose(t, w, stride=2, padding=3),
         (1, 1, 3), (1, 1, 2), (3 - 1) * 2 + 2 - 3 - 3),
        ("conv2d_transpose, input 3x3, kernel 2, stride 2, padding [[3, 3], [0, 0]]",
         lambda t, w: F.conv2d_transpose(t, w, stride=2, padding=[3, 3, 0, 0]), (1, 1, 3, 3), (1, 1, 2, 2),
         (3 - 1) * 2 + 2 - 3 - 3),
        ("conv1d_transpose, input 11, kernel 1, stride 3, padding [15, 16]",
         lambda t, w: F.conv1d_transpose(t, w, stride=3, padding=[15, 16]), (1, 1, 11), (1, 1, 1), (11 - 1) * 3 + 1 - 31)]:
    for onednn in (True, False):
        y, err = predict(fn, [np.ones(wshape, np.float32)], np.ones(xshape, np.float32), onednn=onednn)
        head = f"{what} (output length {length} by the formula), oneDNN {'on' if onednn else 'off'}"
        if err is not None:
            print(f"{head}: refused: {err}")
        else:
            print(f"{head}: returned shape {y.shape}")
            shown |= bool(y.size == 0)
for rank in (1, 2, 3):  # input 3, kernel 2, stride 2, padding 3: length 0 on every axis; with and without a bias
    op = getattr(F, f"conv{rank}d_transpose")
    for bias in (False, True):
        params = [np.ones((1, 1, *[2] * rank), np.float32)] + ([np.ones(1, np.float32)] if bias else [])
        for onednn in (True, False):
            y, err = predict(lambda t, w, *b, op=op: op(t, w, *b, stride=2, padding=3), params,
                             np.ones((1, 1, *[3] * rank), np.float32), onednn=onednn)
            head = f"conv{rank}d_transpose{' + bias' if bias else ''}, oneDNN {'on' if onednn else 'off'}"
            print(f"{head}: refused: {err}" if err is not None else f"{head}: returned shape {y.shape}")
if shown:
    print("defect shown: a model with an output of length 0 returns an empty tensor")
    sys.exit(1)
print("not shown: every zero-length model was refused")
sys.exit(0)
