"""paddle.inference (CPU, oneDNN on by default), float64: conv2d_transpose + bias + relu gives
wrong values (max |diff| ~18 vs eager); without bias, or with disable_mkldnn(), it is exact.
switch_ir_optim(False) does not help (the oneDNN passes still run). paddlepaddle 3.3.1.
Also: a float64 forward conv2d + bias is refused ("Ctx should have corresponding OpInfo
pd_op.fused_conv2d") with oneDNN, exact with disable_mkldnn()."""
import tempfile
import numpy as np
import paddle
import paddle.nn.functional as F

rng = np.random.default_rng(0)

def check(transpose, act):
    w = rng.standard_normal((3, 4, 3, 3)) if transpose else rng.standard_normal((4, 3, 3, 3))
    b = rng.standard_normal(4)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter(list(w.shape), dtype="float64", default_initializer=paddle.nn.initializer.Assign(w))
            self.b = self.create_parameter([4], dtype="float64", default_initializer=paddle.nn.initializer.Assign(b))
        def forward(self, x):
            y = (F.conv2d_transpose if transpose else F.conv2d)(x, self.w, self.b, padding=1)
            return F.relu(y) if act else y

    net = Net(); net.eval()
    d = tempfile.mkdtemp()
    paddle.jit.save(net, d + "/model", input_spec=[paddle.static.InputSpec([1, 3, 5, 5], "float64", name="x")])
    x = rng.standard_normal((1, 3, 5, 5))
    ref = net(paddle.to_tensor(x)).numpy()
    for mode in ("default", "no_ir_optim", "disable_mkldnn"):
        cfg = paddle.inference.Config(d + "/model.json", d + "/model.pdiparams")
        cfg.disable_gpu(); cfg.disable_glog_info(); cfg.switch_ir_optim(mode != "no_ir_optim")
        if mode == "disable_mkldnn":
            cfg.disable_mkldnn()
        what = f"{'conv2d_transpose' if transpose else 'conv2d'}+bias{'+relu' if act else ''} float64 {mode}:"
        try:
            p = paddle.inference.create_predictor(cfg)
            p.get_input_handle("x").copy_from_cpu(x)
            p.run()
            y = p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
            print(what, "max|diff| vs eager", np.abs(y - ref).max())
        except Exception as e:
            print(what, "RAISED", type(e).__name__, str(e).strip().splitlines()[0][:120])

check(True, True)
check(True, False)
check(False, False)
