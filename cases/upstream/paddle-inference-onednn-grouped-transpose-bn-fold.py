"""Paddle Inference (CPU, oneDNN on: its default) folds a batch_norm into a grouped conv2d_transpose along the wrong
weight axis.

A conv2d_transpose weight is (C_in, C_out/groups, kh, kw); the batch norm's per-channel scale belongs on the C_out
axis, split by group. With groups > 1 (and not C_in == C_out == groups) the fold refuses the model ("Broadcast
dimension mismatch ... X = [2, 1, 2, 1] and ... Y = [4, 1, 1, 1]") when C_in != C_out, and returns wrong values when
C_in == C_out (the shapes agree). Eager paddle, groups 1, a depthwise conv_transpose, and config.disable_mkldnn()
are right; switch_ir_optim(False) does not help.
"""
import os
import tempfile

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.static import InputSpec

paddle.set_device("cpu")
rng = np.random.default_rng(0)


def run(cin, cout, groups, dtype="float32", onednn=True, ir_optim=True):
    x = rng.uniform(-1, 1, (1, cin, 3, 3)).astype(dtype)
    w = rng.uniform(-1, 1, (cin, cout // groups, 1, 1)).astype(dtype)
    mean, var = rng.uniform(-1, 1, cout).astype(dtype), rng.uniform(0.5, 2, cout).astype(dtype)
    gamma, beta = rng.uniform(-2, 2, cout).astype(dtype), rng.uniform(-1, 1, cout).astype(dtype)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter(list(w.shape), dtype=dtype, default_initializer=paddle.nn.initializer.Assign(w))
            for name, a in [("mean", mean), ("var", var), ("gamma", gamma), ("beta", beta)]:
                self.register_buffer(name, paddle.to_tensor(a))

        def forward(self, x):
            y = F.conv2d_transpose(x, self.w, None, groups=groups)
            return F.batch_norm(y, self.mean, self.var, weight=self.gamma, bias=self.beta, training=False, epsilon=1e-5)

    net = Net()
    net.eval()
    # float64 truth: a 1x1 kernel, stride 1: y[:, o] = sum over the group's input channels c of x[:, c] * w[c, o']
    cg, og = cin // groups, cout // groups
    ref = np.zeros((1, cout, 3, 3))
    for g in range(groups):
        ref[:, g * og:(g + 1) * og] = np.einsum("nchw,co->nohw", x[:, g * cg:(g + 1) * cg].astype(np.float64),
                                                w[g * cg:(g + 1) * cg, :, 0, 0].astype(np.float64))
    per = (lambda a: a.astype(np.float64).reshape(1, -1, 1, 1))
    ref = (ref - per(mean)) / np.sqrt(per(var) + 1e-5) * per(gamma) + per(beta)
    eager = np.abs(net(paddle.to_tensor(x)).numpy() - ref).max()
    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(net, os.path.join(tmp, "model"), input_spec=[InputSpec(list(x.shape), dtype, name="x")])
        config = paddle.inference.Config(os.path.join(tmp, "model.json"), os.path.join(tmp, "model.pdiparams"))
        config.disable_gpu()
        config.switch_ir_optim(ir_optim)
        config.disable_glog_info()
        if not onednn:
            config.disable_mkldnn()
        try:
            predictor = paddle.inference.create_predictor(config)
            predictor.get_input_handle("x").copy_from_cpu(x)
            predictor.run()
            y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
        except Exception as exc:  # noqa: BLE001
            return f"raised {str(exc).strip().splitlines()[0][:120]} (eager paddle max|err| {eager:.2g})"
    return f"max|y - truth| {np.abs(y - ref).max():.3g} (eager paddle {eager:.2g})"


print("paddle", paddle.__version__)
for cin, cout, groups in [(2, 4, 1), (4, 4, 1), (2, 4, 2), (4, 2, 2), (4, 4, 2), (6, 6, 3), (4, 4, 4)]:
    for onednn, ir_optim in [(True, True), (True, False), (False, True)]:
        print(f"conv2d_transpose {cin}->{cout}, groups {groups}, float32, oneDNN {'on ' if onednn else 'off'}, "
              f"ir_optim {'on ' if ir_optim else 'off'} -> batch_norm: {run(cin, cout, groups, 'float32', onednn, ir_optim)}")
print(f"conv2d_transpose 2->4, groups 2, float64, defaults -> batch_norm: {run(2, 4, 2, 'float64')}")
