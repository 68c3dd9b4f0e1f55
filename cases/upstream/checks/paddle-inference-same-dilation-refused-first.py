"""Paddle Inference (oneDNN): a SAME, dilated conv with a bias runs undilated, or is refused first

Measures saved SAME, dilated convs with a bias run by a CPU predictor: NCHW conv2d (the undilated values), NDHWC
grouped conv3d (a broadcast refusal), float64 NLC conv1d (fused_conv2d has no float64 kernel), each against the
dilated and undilated references and against config.disable_mkldnn(). Exit 1 when any is wrong or refused.
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


def same_pads(n, k, s, d):
    """TensorFlow's SAME padding for one spatial dim of a dilated kernel: (before, after)."""
    total = max((-(-n // s) - 1) * s + d * (k - 1) + 1 - n, 0)
    return total // 2, total - total // 2


def conv_ref(x, w, stride, pads, dil):
    """float64 cross-correlation, NC* layout, w (O, I, *k), pads [(before, after)] per spatial dim."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads])
    w = w.astype(np.float64)
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(len(k))]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*k):
        win = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, dil, out, stride))
        y += np.einsum("nc...,oc->no...", x[(slice(None), slice(None), *win)], w[(slice(None), slice(None), *tap)])
    return y


def error_line(exc):
    """Paddle's error in one line (its message starts with a C++ stack or "In user code:")."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    hits = [ln for ln in lines if "Error" in ln or "Fatal" in ln]
    return (hits or lines or [type(exc).__name__])[0][:220]


def predict(fn, w, b, x, onednn=True):
    """fn(x, w, b) in a layer, paddle.jit.save'd and run by a CPU predictor: (output, None) or (None, error)."""
    dtype = str(x.dtype)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter(list(w.shape), dtype=dtype, default_initializer=paddle.nn.initializer.Assign(w))
            self.b = self.create_parameter(list(b.shape), dtype=dtype, default_initializer=paddle.nn.initializer.Assign(b))

        def forward(self, x):
            return fn(x, self.w, self.b)

    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(Net(), os.path.join(tmp, "model"), input_spec=[InputSpec(list(x.shape), dtype, name="x")])
        cfg = paddle.inference.Config(os.path.join(tmp, "model.json"), os.path.join(tmp, "model.pdiparams"))
        cfg.disable_gpu()
        cfg.disable_glog_info()
        if not onednn:
            cfg.disable_mkldnn()
        try:
            p = paddle.inference.create_predictor(cfg)
            p.get_input_handle("x").copy_from_cpu(x)
            p.run()
            return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu(), None
        except Exception as exc:  # a refused model is what this script reports
            return None, error_line(exc)


paddle.set_device("cpu")
probe = paddle.inference.Config()
probe.disable_gpu()
ONEDNN = bool(probe.mkldnn_enabled())
print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}); CPU predictor oneDNN by default: {ONEDNN} "
      f"(Config.mkldnn_enabled()); AVX-512F: {paddle.base.core.supports_avx512f()}")
rng = np.random.default_rng(0)
shown = False

# 1. NCHW conv2d + bias, SAME, dilation 2: runs, undilated
x = rng.standard_normal((1, 2, 7, 6)).astype("float32")
w = rng.standard_normal((3, 2, 3, 3)).astype("float32")
b = rng.standard_normal(3).astype("float32")
y, err = predict(lambda t, w_, b_: F.conv2d(t, w_, b_, padding="SAME", dilation=2), w, b, x)
per_channel = b.astype(np.float64).reshape(1, -1, 1, 1)
ref = conv_ref(x, w, [1, 1], [same_pads(n, 3, 1, 2) for n in (7, 6)], [2, 2]) + per_channel
undilated = conv_ref(x, w, [1, 1], [same_pads(n, 3, 1, 1) for n in (7, 6)], [1, 1]) + per_channel
what = "NCHW conv2d 2->3 + bias, input 7x6, kernel 3, SAME, dilation 2, float32"
if err is not None:
    print(f"{what}: refused: {err}")
    shown = True
elif y.shape != ref.shape:
    print(f"{what}: shape {y.shape}, expected {ref.shape}")
    shown = True
else:
    e = np.abs(y - ref)
    worst = tuple(int(i) for i in np.unravel_index(e.argmax(), e.shape))
    print(f"{what}: max |y - dilated reference| {e.max():.3g} at {worst} (y {y[worst]:.5f}, expected {ref[worst]:.5f}); "
          f"max |y - undilated reference| {np.abs(y - undilated).max():.2g}")
    shown |= bool(e.max() > 1e-4)

# 2. and 3. models oneDNN refuses before the dilation matters (the same without dilation)
refusals = [
    ("NDHWC conv3d 9->6 groups 3 + bias, input 2x5x2, kernel 3, SAME, dilation [1, 1, 2], float32",
     lambda t, w_, b_: F.conv3d(t, w_, b_, padding="SAME", dilation=[1, 1, 2], groups=3, data_format="NDHWC"),
     (1, 2, 5, 2, 9), (6, 3, 3, 3, 3), "float32"),
    ("NLC conv1d 4->4 groups 2 + bias, input 7, kernel 3, SAME, dilation 3, float64",
     lambda t, w_, b_: F.conv1d(t, w_, b_, padding="SAME", dilation=3, groups=2, data_format="NLC"),
     (1, 7, 4), (4, 2, 3), "float64"),
]
for what, fn, xshape, wshape, dtype in refusals:
    x = rng.standard_normal(xshape).astype(dtype)
    w = rng.standard_normal(wshape).astype(dtype)
    b = rng.standard_normal(wshape[0]).astype(dtype)
    y, err = predict(fn, w, b, x)
    y_off, err_off = predict(fn, w, b, x, onednn=False)
    eager = fn(paddle.to_tensor(x), paddle.to_tensor(w), paddle.to_tensor(b)).numpy()
    off = err_off or f"runs, shape {y_off.shape}, max |y - eager paddle| {np.abs(y_off - eager).max():.2g}"
    print(f"{what}: {'refused: ' + err if err else f'runs, shape {y.shape}'}\n    with config.disable_mkldnn(): {off}")
    shown |= err is not None

if shown:
    print("defect shown" + ("" if ONEDNN else " (the undilated values; this host's predictor runs without oneDNN)"))
    sys.exit(1)
print("not shown on this host: every model ran with the dilated result")
sys.exit(0)
