"""Paddle Inference (oneDNN): create_predictor segfaults on conv2d followed by leaky_relu (conv_activation fuse pass)

Project: PaddlePaddle/Paddle (https://github.com/PaddlePaddle/Paddle/issues)
Upstream: none found
Related: https://github.com/PaddlePaddle/Paddle/pull/75547 (made leaky_relu's negative_slope a double in C++)
Checked: 2026-11-28, paddlepaddle 3.3.1 (CPU), searched PaddlePaddle/Paddle issues for "conv_activation_mkldnn_fuse_pass leaky_relu", "FusedConv2dOp segmentation fault", "leaky_relu oneDNN segfault", "negative_slope double"

What happens: a paddle.jit.save'd layer computing F.leaky_relu(F.conv2d(x, w), negative_slope=0.1) (NCHW, float32,
4->4 channels, 3x3) kills the process with SIGSEGV inside paddle.inference.create_predictor when oneDNN is on, the
CPU default: the predictor is never returned. Paddle's fatal-signal handler prints the stack:
DrrRewritePattern::PatternGraphRewrite -> DrrRewritePattern::CreateOperations -> pir::Builder::Build<FusedConv2dOp>
-> paddle::onednn::dialect::FusedConv2dOp::Build -> pir::FloatAttribute::data(), right after the log line
"Running PIR pass [conv_activation_mkldnn_fuse_pass]". The same with the default slope (F.leaky_relu(y), 0.01) and
with config.switch_ir_optim(False) (the oneDNN passes still run). With config.disable_mkldnn() the model runs and
matches a float64 NumPy reference. Also crashes: NCHW conv2d + bias, NHWC conv2d without bias, and conv2d ->
batch_norm -> leaky_relu (the batch norm is folded into the conv first); conv1d, conv3d, conv2d_transpose, and
conv2d -> divide -> leaky_relu run.

Expected: create_predictor returns a predictor whose output equals leaky_relu(conv2d(x, w)), or the fuse pass leaves
the pair alone. The reference here is a float64 NumPy cross-correlation followed by where(y > 0, y, 0.1 * y).

Mechanism: the leaky_relu pattern of the oneDNN conv + activation fuse pass (paddle/fluid/pir/transforms/onednn/,
conv_activation_*_fuse_pass.cc) passes the matched op's attribute straight through as the fused op's alpha:
{"fuse_alpha", pat.Attr("negative_slope")}. Since PR 75547, pd_op.leaky_relu's negative_slope is a double
(pd_op.h: LeakyReluOp::Build(..., double negative_slope); the saved model.json holds it as "0.a_f64"), while
onednn_op.fused_conv2d's fuse_alpha is a float attribute: FusedConv2dOp::Build reads a DoubleAttribute as
pir::FloatAttribute and dereferences nothing. Converting the value (as the same file already does for clip's
bounds, with ComputeAttr returning float) would fix it.

Host: Paddle Inference with oneDNN on (Config.mkldnn_enabled(): the CPU default of the x86 wheel in 3.3.1).
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
