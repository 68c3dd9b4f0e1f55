"""paddle.inference (CPU, oneDNN on by default): conv2d (NCHW) directly followed by
F.leaky_relu kills the process with SIGSEGV in predictor.run(), with or without IR
optimization; config.disable_mkldnn() runs it correctly. paddlepaddle 3.3.1.
Usage: python paddle_repro_2.py [default|no_ir_optim|disable_mkldnn]"""
import sys, tempfile
import numpy as np
import paddle
import paddle.nn.functional as F

class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([4, 4, 3, 3])
    def forward(self, x):
        return F.leaky_relu(F.conv2d(x, self.w, None), negative_slope=0.1)

mode = sys.argv[1] if len(sys.argv) > 1 else "default"
net = Net(); net.eval()
d = tempfile.mkdtemp()
paddle.jit.save(net, d + "/model", input_spec=[paddle.static.InputSpec([1, 4, 5, 5], "float32", name="x")])
cfg = paddle.inference.Config(d + "/model.json", d + "/model.pdiparams")
cfg.disable_gpu(); cfg.disable_glog_info(); cfg.switch_ir_optim(mode != "no_ir_optim")
if mode == "disable_mkldnn":
    cfg.disable_mkldnn()
p = paddle.inference.create_predictor(cfg)
x = np.random.default_rng(0).standard_normal((1, 4, 5, 5)).astype("float32")
p.get_input_handle("x").copy_from_cpu(x)
print(mode, "running", flush=True)
p.run()
y = p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
print(mode, "ok, max|diff| vs eager", np.abs(y - net(paddle.to_tensor(x)).numpy()).max())
