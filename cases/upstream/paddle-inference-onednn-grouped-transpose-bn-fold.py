"""[Inference][oneDNN] grouped conv2d_transpose + batch_norm: conv2d_transpose_bn_fuse_pass scales the weight along its input channels

Kind: wrong-value
Ask: a fix: fold along the output channels of the (C_in, C_out/groups, kh, kw) weight, or skip groups > 1.

What happens: A saved Conv2DTranspose(4, 4, 1, groups=2) + BatchNorm2D(4) with scales [1, 2, 3, 4] returns [7, 10, 43, 50] for [4, 12, 36, 56] on the CPU predictor (oneDNN on by default). With C_in != C_out it is refused ("Broadcast dimension mismatch").

Expected: the eager values.

Mechanism: Conv2dTransposeBnOneDNNFusePattern (paddle/fluid/pir/transforms/onednn/conv2d_transpose_bn_fuse_pass.cc) assumes a 5-D gIOHW weight: for groups > 1 it swaps axes 1 and 2 of the 4-D weight, so the (C_out, 1, 1, 1) scale lands on the input channels. Its epsilon check reads `!epsilon`.
"""
import tempfile
import numpy as np
import paddle
print("paddle", paddle.__version__)
init = lambda a: paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(np.array(a, "float32")))
w = np.arange(1, 9).reshape(4, 2, 1, 1)  # (C_in, C_out / groups, kh, kw)
net = paddle.nn.Sequential(paddle.nn.Conv2DTranspose(4, 4, 1, groups=2, weight_attr=init(w), bias_attr=False),
                           paddle.nn.BatchNorm2D(4, epsilon=1e-12, weight_attr=init([1, 2, 3, 4])))  # channel o times o + 1
net.eval()
path = tempfile.mkdtemp() + "/net"
paddle.jit.save(net, path, input_spec=[paddle.static.InputSpec([1, 4, 1, 1], "float32")])
config = paddle.inference.Config(path + ".json", path + ".pdiparams")  # CPU: oneDNN is on by default
config.disable_glog_info()
predictor = paddle.inference.create_predictor(config)
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(np.ones((1, 4, 1, 1), "float32"))
predictor.run()
y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
eager = net(paddle.ones([1, 4, 1, 1])).numpy()
print("eager    ", eager.ravel().tolist(), "\npredictor", y.ravel().tolist())
raise SystemExit(0 if np.allclose(y, eager) else 1)
