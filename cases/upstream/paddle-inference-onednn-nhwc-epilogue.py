"""Channels-last models under oneDNN (3.3.1, PIR): the op after the conv reads NCHW dims, so a bias lands on W when W == C

Kind: wrong-value
Ask: a fix: rotate the conv output back to channels-last (or keep the next op off oneDNN) before an op that reads it; #43105 in Paddle 3.3.1's PIR passes.

What happens: a saved Conv3D(2, 3, (1, 1, 3), data_format="NDHWC") with bias [100, 200, 300], run by a CPU predictor (oneDNN on by default), adds the bias along W instead of C where the output width equals C_out (3 here): each row gets one bias value. Eager Paddle and config.disable_mkldnn() are right.

Expected: the eager values and shapes.

Mechanism: oneDNN kernels keep a channels-last tensor in [N, C, ...] dims and rotate it back only before a non-oneDNN op or the fetch (#38126). onednn_placement_pass (paddle/fluid/pir/transforms/onednn/) also puts the bias add, elementwise ops and squeeze on oneDNN, so they read [N, C, D, H, W] dims and broadcast the (1, 1, 1, 1, C) bias along W. config.delete_pass("onednn_placement_pass") fixes every symptom measured.

Symptoms:
a channels-last conv, then a bias or elementwise op, W_out == C_out: wrong values, right shape
the same, W_out != C_out: "Broadcast dimension mismatch ... X = [1, 4, 3, 3] and Y = [1, 1, 1, 4]", a wrong shape, or std::exception
a depthwise NLC conv1d_transpose: the output in (N, 1, C, L) dims
"""
import tempfile
import numpy as np
import paddle
print("paddle", paddle.__version__)
init = lambda a: paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(np.array(a, "float32")))
conv = paddle.nn.Conv3D(2, 3, (1, 1, 3), data_format="NDHWC", bias_attr=init([100, 200, 300]),
                        weight_attr=init(np.ones((3, 2, 1, 1, 3))))  # output (1, 1, 1, 3, 3): W_out 3 == C_out 3
path = tempfile.mkdtemp() + "/conv"
paddle.jit.save(conv, path, input_spec=[paddle.static.InputSpec([1, 1, 1, 5, 2], "float32")])
config = paddle.inference.Config(path + ".json", path + ".pdiparams")  # CPU: oneDNN is on by default
config.disable_glog_info()
predictor = paddle.inference.create_predictor(config)
x = np.arange(10, dtype="float32").reshape(1, 1, 1, 5, 2)
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(x)
predictor.run()
y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
eager = conv(paddle.to_tensor(x)).numpy()
print("eager     (W, C):", eager[0, 0, 0].tolist(), "\npredictor (W, C):", y[0, 0, 0].tolist())
raise SystemExit(0 if np.array_equal(y, eager) else 1)
