"""[Inference][oneDNN] float64 models: fused activations and scales are silently dropped, other fused ops have no float64 kernel

Kind: wrong-value
Ask: a fix: keep the oneDNN fuse passes off float64 ops, or make the CPU fallback kernels apply what was fused.

What happens: a saved float64 program run by a CPU predictor (oneDNN on by default) returns relu(x + c) as x + c and (x * c) * 3 as x * c; relu(conv2d_transpose(x, w, b)) returns the pre-activation values. Other float64 models are refused. float32, eager Paddle and config.disable_mkldnn() are right.

Expected: the values eager Paddle computes.

Mechanism: elementwise_act_onednn_fuse_pass and operator_scale_onednn_fuse_pass (paddle/fluid/pir/transforms/onednn/) build onednn_op.fused_elementwise_* with fuse_activation / fused_output_scale for any dtype. oneDNN's kernels are float32/bfloat16/int8 only, so float64 falls back to paddle/phi/kernels/legacy/cpu/fused_elementwise_kernel.cc, whose kernels mark those attributes UNUSED. #47357 was this defect in the pre-PIR pass; PR #72405 made another PIR pass skip float64.

Symptoms:
an elementwise op, then an activation (relu, relu6, leaky_relu, clamp, tanh, sigmoid, gelu, hardswish): the activation dropped
an elementwise op, then a multiply by a Python scalar: the scalar dropped
conv1d/2d/3d with a bias or an activation: refused, "Ctx should have corresponding OpInfo pd_op.fused_conv2d"
NHWC/NLC conv_transpose with a bias: refused, pd_op.conv2d_transpose_bias has no float64 kernel
conv2d or conv2d_transpose, then batch_norm: refused, the fold writes float32 parameters
"""
import sys
import tempfile
import numpy as np
import paddle
print("paddle", paddle.__version__)
c = np.array([1.0, -2.0, 3.0, -4.0])
def f(x):
    t = paddle.to_tensor(c)
    return paddle.nn.functional.relu(x + t), (x * t) * 3.0
path = tempfile.mkdtemp() + "/f"
paddle.jit.save(paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([4], "float64")], full_graph=True), path)
config = paddle.inference.Config(path + ".json", path + ".pdiparams")  # CPU: oneDNN is on by default
config.disable_glog_info()
predictor = paddle.inference.create_predictor(config)
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(np.ones(4))  # x = [1, 1, 1, 1]
predictor.run()
got = [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]
want = [np.maximum(1 + c, 0), c * 3.0]
print("relu(x + c), (x * c) * 3\nexpected", [w.tolist() for w in want], "\nactual  ", [g.tolist() for g in got])
sys.exit(0 if all(np.array_equal(g, w) for g, w in zip(got, want)) else 1)
