"""Channels-last models under oneDNN (3.3.1, PIR): the op after the conv reads NCHW dims, so a bias lands on W when W == C

Kind: wrong-value
Ask: a fix: rotate the conv output back before the next op reads it (#43105, in the PIR passes).

What happens: A saved Conv3D(2, 3, (1, 1, 3), data_format="NDHWC") with bias [100, 200, 300], output width 3, adds the bias along W on the CPU predictor (oneDNN on by default). disable_mkldnn() is right.

Expected: the eager values.

Mechanism: oneDNN keeps channels-last tensors in [N, C, ...] dims and rotates back only before a non-oneDNN op (#38126). onednn_placement_pass also puts the bias add, elementwise ops and squeeze on oneDNN; deleting it fixes every case below.

Symptoms:
a bias or elementwise op after a channels-last conv, W == C: wrong values
the same, W != C: "Broadcast dimension mismatch" or a wrong shape
a depthwise NLC conv1d_transpose: output in (N, 1, C, L) dims
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
