"""[Inference][oneDNN] create_predictor segfaults on Conv2D followed by LeakyReLU (conv_activation_mkldnn_fuse_pass, negative_slope is a double)

Kind: crash
Ask: a fix: convert negative_slope to the float fuse_alpha in the leaky_relu pattern of conv_activation_mkldnn_fuse_pass.

What happens: a saved nn.Sequential(Conv2D, BatchNorm2D, LeakyReLU(0.1)) kills the process with SIGSEGV in paddle.inference.create_predictor on the CPU (oneDNN on, the default), in FusedConv2dOp::Build -> pir::FloatAttribute::data(). The same for conv2d -> leaky_relu with or without a bias, conv2d -> add(per-channel) -> leaky_relu, float64, and switch_ir_optim(False). config.disable_mkldnn() matches eager. conv1d, conv3d, conv2d_transpose, and a divide or multiply before the leaky_relu run.

Expected: a predictor whose output equals the eager model's.

Mechanism: ConvLeakyReluFusePattern (paddle/fluid/pir/transforms/onednn/conv_activation_mkldnn_fuse_pass.cc) writes {"fuse_alpha", pat.Attr("negative_slope")}. Since PR #75547 negative_slope is a double, fuse_alpha a float: FusedConv2dOp::Build casts the DoubleAttribute to pir::FloatAttribute, gets null and calls data(). A batch norm or per-channel add before the activation is first folded into the conv.
"""
import sys
import tempfile
import numpy as np
import paddle
print("paddle", paddle.__version__)
net = paddle.nn.Sequential(paddle.nn.Conv2D(3, 8, 3), paddle.nn.BatchNorm2D(8), paddle.nn.LeakyReLU(0.1))
net.eval()
path = tempfile.mkdtemp() + "/net"
paddle.jit.save(net, path, input_spec=[paddle.static.InputSpec([1, 3, 8, 8], "float32")])
config = paddle.inference.Config(path + ".json", path + ".pdiparams")  # CPU: oneDNN is on by default
config.disable_glog_info()
print("create_predictor with oneDNN on:", flush=True)
predictor = paddle.inference.create_predictor(config)  # SIGSEGV here
x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype("float32")
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(x)
predictor.run()
y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
err = float(np.abs(y - net(paddle.to_tensor(x)).numpy()).max())
print("ran; max |predictor - eager|", err)
sys.exit(0 if err < 1e-4 else 1)
