"""[Inference][oneDNN] create_predictor segfaults on Conv2D followed by LeakyReLU (conv_activation_mkldnn_fuse_pass, negative_slope is a double)

Kind: crash
Ask: a fix: convert negative_slope to the float fuse_alpha in the leaky_relu pattern.

What happens: A saved nn.Sequential(Conv2D, BatchNorm2D, LeakyReLU(0.1)) kills the process with SIGSEGV in create_predictor (CPU, oneDNN on by default), also for conv2d -> leaky_relu, float64, and switch_ir_optim(False). config.disable_mkldnn() matches eager.

Expected: a predictor whose output equals the eager model's.

Mechanism: ConvLeakyReluFusePattern (paddle/fluid/pir/transforms/onednn/conv_activation_mkldnn_fuse_pass.cc) writes {"fuse_alpha", pat.Attr("negative_slope")}. Since PR #75547 negative_slope is a double: FusedConv2dOp::Build casts it to pir::FloatAttribute, gets null and calls data(). A batch norm before the activation is folded into the conv first.
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
