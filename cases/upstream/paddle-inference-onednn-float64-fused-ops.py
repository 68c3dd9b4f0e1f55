"""[Inference][oneDNN] float64 models: fused activations and scales are silently dropped, other fused ops have no float64 kernel

Kind: wrong-value
Ask: a fix: keep the oneDNN fuse passes off float64 ops.

What happens: A saved float64 program run by a CPU predictor (oneDNN on by default) returns relu(x + c) as x + c and (x * c) * 3 as x * c. float32 and disable_mkldnn() are right.

Expected: the values eager Paddle computes.

Mechanism: elementwise_act_onednn_fuse_pass and operator_scale_onednn_fuse_pass build onednn_op.fused_elementwise_* for any dtype; oneDNN has no float64 kernel, so the op falls back to paddle/phi/kernels/legacy/cpu/fused_elementwise_kernel.cc, which marks fuse_activation and fused_output_scale UNUSED. #47357 was this defect before PIR.

Symptoms:
an elementwise op, then an activation or a scalar multiply: dropped
conv with a bias or an activation: refused (pd_op.fused_conv2d)
NHWC conv_transpose with a bias: refused (conv2d_transpose_bias)
conv or conv_transpose, then batch_norm: refused (a float32 fold)
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
