"""Paddle Inference (oneDNN): depthwise NLC conv1d_transpose

Runs a saved depthwise (groups == C) NLC conv1d_transpose (3 channels, length 12, kernel 5, stride 2) through a CPU
predictor, with switch_ir_optim(False), disable_mkldnn(), NCL and groups 1 as controls, against a float64
reference; reads a (N, 1, C, L) result as such. Exit 1 when the shape is wrong.
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

C, L, K, S = 3, 12, 5, 2
rng = np.random.default_rng(0)
X = rng.standard_normal((1, L, C)).astype("float32")


def predict(w, groups, layout, x, onednn=True, ir_optim=True):
    """F.conv1d_transpose in a layer, paddle.jit.save'd and run by a CPU predictor."""
    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter(list(w.shape), default_initializer=paddle.nn.initializer.Assign(w))

        def forward(self, t):
            return F.conv1d_transpose(t, self.w, None, stride=S, groups=groups, data_format=layout)

    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(Net(), os.path.join(tmp, "model"), input_spec=[InputSpec(list(x.shape), "float32", name="x")])
        cfg = paddle.inference.Config(os.path.join(tmp, "model.json"), os.path.join(tmp, "model.pdiparams"))
        cfg.disable_gpu()
        cfg.disable_glog_info()
        cfg.switch_ir_optim(ir_optim)
        if not onednn:
            cfg.disable_mkldnn()
        p = paddle.inference.create_predictor(cfg)
        p.get_input_handle("x").copy_from_cpu(x)
        p.run()
        return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()


def reference_ncl(x, w, groups):
    """float64 transposed conv1d, NCL, w (C_in, C_out/groups, K), no padding."""
    n, cin, length = x.shape
    og, cg = w.shape[1], cin // groups
    y = np.zeros((n, og * groups, (length - 1) * S + K))
    for g in range(groups):
        for k in range(K):
            y[:, g * og:(g + 1) * og, k:k + (length - 1) * S + 1:S] += np.einsum(
                "ncl,co->nol", x[:, g * cg:(g + 1) * cg].astype(np.float64), w[g * cg:(g + 1) * cg, :, k].astype(np.float64))
    return y


paddle.set_device("cpu")
probe = paddle.inference.Config()
probe.disable_gpu()
ONEDNN = bool(probe.mkldnn_enabled())
print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}); CPU predictor oneDNN by default: {ONEDNN} "
      f"(Config.mkldnn_enabled()); AVX-512F: {paddle.base.core.supports_avx512f()}")

shown = False
for what, groups, layout, kw in [("depthwise (groups 3), NLC", 3, "NLC", {}),
                                 ("depthwise (groups 3), NLC, switch_ir_optim(False)", 3, "NLC", {"ir_optim": False}),
                                 ("depthwise (groups 3), NLC, config.disable_mkldnn()", 3, "NLC", {"onednn": False}),
                                 ("depthwise (groups 3), NCL", 3, "NCL", {}),
                                 ("groups 1, NLC", 1, "NLC", {})]:
    w = rng.standard_normal((C, C // groups, K)).astype("float32")
    x = X if layout == "NLC" else np.ascontiguousarray(X.transpose(0, 2, 1))
    ref = reference_ncl(np.ascontiguousarray(X.transpose(0, 2, 1)), w, groups)  # (N, C, L_out)
    ref = ref.transpose(0, 2, 1) if layout == "NLC" else ref
    y = predict(w, groups, layout, x, **kw)
    line = f"conv1d_transpose {C}->{C}, {what}, length {L}, kernel {K}, stride {S}: shape {y.shape}, expected {ref.shape}"
    if y.shape == ref.shape:
        print(f"{line}; max |y - float64 reference| {np.abs(y - ref).max():.2g}")
        shown |= bool(np.abs(y - ref).max() > 1e-4)
    else:
        shown = True
        as_ncl = ref.transpose(0, 2, 1) if layout == "NLC" else ref
        same = y.ndim == 4 and y.shape[1] == 1 and y[:, 0].shape == as_ncl.shape
        print(line + (f"; read as [N, 1, C, L]: max |y[:, 0] - reference (N, C, L)| {np.abs(y[:, 0] - as_ncl).max():.2g}"
                      if same else ""))
if shown:
    print("defect shown: the predictor returns the wrong shape")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
