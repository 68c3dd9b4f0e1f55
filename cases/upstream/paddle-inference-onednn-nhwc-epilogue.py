"""paddle.inference (CPU, oneDNN on by default): an NHWC conv followed by an elementwise op
sees the conv output with NCHW dims: broadcast error, or a silently wrong output shape.
paddlepaddle 3.3.1. Passes with config.disable_mkldnn(); fails with switch_ir_optim(False) too."""
import os, sys, tempfile
import numpy as np
import paddle
import paddle.nn.functional as F

class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([4, 4, 3, 3])
        self.register_buffer("scale", paddle.to_tensor(np.arange(1, 5, dtype="float32")))
    def forward(self, x):
        y = F.conv2d(x, self.w, None, data_format="NHWC")
        return F.relu(paddle.multiply(y, paddle.reshape(self.scale, [1, 1, 1, -1])))

net = Net(); net.eval()
d = tempfile.mkdtemp()
paddle.jit.save(net, d + "/model", input_spec=[paddle.static.InputSpec([1, 5, 5, 4], "float32", name="x")])
x = np.random.default_rng(0).standard_normal((1, 5, 5, 4)).astype("float32")
ref = net(paddle.to_tensor(x)).numpy()
for mode in ("default", "no_ir_optim", "disable_mkldnn"):
    cfg = paddle.inference.Config(d + "/model.json", d + "/model.pdiparams")
    cfg.disable_gpu(); cfg.disable_glog_info(); cfg.switch_ir_optim(mode != "no_ir_optim")
    if mode == "disable_mkldnn":
        cfg.disable_mkldnn()
    p = paddle.inference.create_predictor(cfg)
    p.get_input_handle("x").copy_from_cpu(x)
    try:
        p.run()
        y = p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
        print(mode, "mkldnn", cfg.mkldnn_enabled(), "shape", y.shape, "eager", ref.shape,
              "max|diff|", np.abs(y - ref).max() if y.shape == ref.shape else "n/a")
    except Exception as e:
        print(mode, "mkldnn", cfg.mkldnn_enabled(), "RAISED", [l.strip() for l in str(e).splitlines() if "Error" in l][0][:160])
