"""Paddle Inference (oneDNN): create_predictor on conv2d followed by leaky_relu

Runs, each in a child process, a saved conv2d -> F.leaky_relu (NCHW, float32, slope 0.1 and the default) through a
CPU predictor, oneDNN on, with and without switch_ir_optim(False), and config.disable_mkldnn() as the control
against a float64 NumPy reference; names the signal and the innermost frames of a crash. Exit 1 when a predictor
dies.
"""
import os
import signal
import subprocess
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
import paddle
import paddle.nn.functional as F
from paddle.static import InputSpec

rng = np.random.default_rng(0)
W = rng.standard_normal((4, 4, 3, 3)).astype("float32")
X = rng.standard_normal((1, 4, 5, 5)).astype("float32")


class Net(paddle.nn.Layer):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
        self.w = self.create_parameter([4, 4, 3, 3], default_initializer=paddle.nn.initializer.Assign(W))

    def forward(self, x):
        y = F.conv2d(x, self.w, None)
        return F.leaky_relu(y) if self.slope is None else F.leaky_relu(y, negative_slope=self.slope)


def run_predictor(slope, ir_optim=True, onednn=True, child=False):
    """Save Net(slope), build a CPU predictor and run it; a child prints each stage before it starts."""
    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(Net(slope), os.path.join(tmp, "model"), input_spec=[InputSpec([1, 4, 5, 5], "float32", name="x")])
        cfg = paddle.inference.Config(os.path.join(tmp, "model.json"), os.path.join(tmp, "model.pdiparams"))
        cfg.disable_gpu()
        cfg.switch_ir_optim(ir_optim)
        if not onednn:
            cfg.disable_mkldnn()
        if not child:
            cfg.disable_glog_info()
        stage = print if child else (lambda *a, **k: None)
        stage("stage: create_predictor", flush=True)
        p = paddle.inference.create_predictor(cfg)
        stage("stage: run", flush=True)
        p.get_input_handle("x").copy_from_cpu(X)
        p.run()
        stage("stage: done", flush=True)
        return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()


if len(sys.argv) == 3 and sys.argv[1] == "child":  # one predictor per child process: the crash takes it down
    slope = None if sys.argv[2].startswith("default") else 0.1
    run_predictor(slope, ir_optim=not sys.argv[2].endswith("no_ir_optim"), child=True)
    sys.exit(0)

paddle.set_device("cpu")
probe = paddle.inference.Config()
probe.disable_gpu()
ONEDNN = bool(probe.mkldnn_enabled())
print(f"paddle {paddle.__version__} (commit {paddle.version.commit[:10]}); CPU predictor oneDNN by default: {ONEDNN} "
      f"(Config.mkldnn_enabled()); AVX-512F: {paddle.base.core.supports_avx512f()}")

# float64 reference: conv2d (no padding) then leaky_relu(0.1)
ref = np.zeros((1, 4, 3, 3))
for i, j in np.ndindex(3, 3):
    ref += np.einsum("nchw,oc->nohw", X[:, :, i:i + 3, j:j + 3].astype(np.float64), W[:, :, i, j].astype(np.float64))
ref = np.where(ref > 0, ref, 0.1 * ref)
y = run_predictor(0.1, onednn=False)
print(f"config.disable_mkldnn(): runs, max |y - float64 reference| {np.abs(y - ref).max():.2g}")

crashed = False
for mode, what in [("slope_0.1", "F.leaky_relu(y, negative_slope=0.1), default Config"),
                   ("default_slope_no_ir_optim", "F.leaky_relu(y) (slope 0.01), switch_ir_optim(False)")]:
    child = subprocess.run([sys.executable, __file__, "child", mode], capture_output=True, text=True, timeout=300)
    stages = [ln.split(": ", 1)[1] for ln in child.stdout.splitlines() if ln.startswith("stage: ")]
    frames = [ln.strip().split(" in ", 1)[-1].split("(")[0] for ln in child.stderr.splitlines()
              if "FusedConv2dOp::Build(" in ln or "FloatAttribute::data" in ln or "DrrRewritePattern::CreateOperations" in ln]
    if child.returncode < 0:
        crashed = True
        print(f"{what}: process killed by {signal.Signals(-child.returncode).name} during {stages[-1] if stages else 'model save'}"
              + (f"; innermost frames: {' <- '.join(frames)}" if frames else ""))
    else:
        print(f"{what}: exit status {child.returncode}, reached {stages[-1] if stages else 'nothing'}")
if crashed:
    print("defect shown: the predictor crashes on conv2d -> leaky_relu")
    sys.exit(1)
print("not shown on this host" + ("" if ONEDNN else ": the CPU predictor runs without oneDNN by default"))
sys.exit(0)
