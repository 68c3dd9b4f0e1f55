"""paddle.inference (CPU, oneDNN on by default): a depthwise (groups == C_in == C_out) conv1d_transpose
in NLC layout returns its output in oneDNN's [N, 1, C, L] dims instead of [N, L, C]: the values are
right (y[0, 0].T equals eager paddle), the layout is lost. 3 channels, length 12, kernel 5, stride 2:
(1, 1, 3, 27) for (1, 27, 3). switch_ir_optim(False) does not help; disable_mkldnn() is right; NCL,
groups 1, a depth multiplier 2, float64 and NHWC/NDHWC depthwise conv_transpose2d/3d are right.
paddlepaddle 3.3.1. Known issue paddle-inference-onednn-nlc-depthwise-transpose1d-layout (convdiff)."""
import os
import tempfile

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.static import InputSpec

paddle.set_device("cpu")
C, L, K, S = 3, 12, 5, 2
rng = np.random.default_rng(0)
W = rng.standard_normal((C, 1, K)).astype("float32")
X = rng.standard_normal((1, L, C)).astype("float32")


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = paddle.create_parameter([C, 1, K], "float32")
        self.w.set_value(W)

    def forward(self, x):
        return F.conv1d_transpose(x, self.w, None, stride=[S], groups=C, padding=0, data_format="NLC")


def predict(onednn: bool) -> np.ndarray:
    net = Net()
    with tempfile.TemporaryDirectory() as d:
        paddle.jit.save(net, f"{d}/model", input_spec=[InputSpec([1, L, C], "float32", name="x")])
        model = f"{d}/model.json" if os.path.exists(f"{d}/model.json") else f"{d}/model.pdmodel"
        cfg = paddle.inference.Config(model, f"{d}/model.pdiparams")
        cfg.disable_gpu()
        if not onednn:
            cfg.disable_mkldnn()
        p = paddle.inference.create_predictor(cfg)
        p.get_input_handle("x").copy_from_cpu(X)
        p.run()
        return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()


ref = Net()(paddle.to_tensor(X)).numpy()
for onednn in (True, False):
    y = predict(onednn)
    same = y.shape == ref.shape and np.allclose(y, ref, atol=1e-5)
    print(f"oneDNN {'on ' if onednn else 'off'}: shape {y.shape}, eager {ref.shape}: {'right' if same else 'WRONG'}")
    if not same and y.ndim == 4:
        print("  values as [N, 1, C, L]: y[0, 0].T equals eager:", bool(np.allclose(y[0, 0].T, ref[0], atol=1e-5)))
