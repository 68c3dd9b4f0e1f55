"""BatchNorm with data_format NLC / NHWC / NDHWC is exported as a BatchNormalization over the wrong axis (no Transpose)

Kind: wrong-value
Ask: a fix: transpose to channels-first around the BatchNormalization, or raise for channels-last as before PR #449.

What happens: paddle.onnx.export of BatchNorm1D(4, data_format="NLC") writes one BatchNormalization on the (N, L, C) input, with no Transpose, so the per-channel scale lands on the length axis. With L == C the model runs and is silently wrong (below); with L != C ONNX Runtime refuses it ("Invalid input scale: 0th dimension != 7"). NHWC and NDHWC alike.

Expected: Paddle's values; ONNX BatchNormalization takes channels on axis 1 (https://onnx.ai/onnx/operators/onnx__BatchNormalization.html).

Mechanism: BatchNormMapper (paddle2onnx/mapper/nn/batch_norm.h) reads data_format in its PIR constructor, but BatchNormMapper::Opset7 (batch_norm.cc) never uses it. An older version asserted NCHW ("not supported by ONNX", PR #449).
"""
import tempfile
import numpy as np
import onnx
import onnxruntime as ort
import paddle
import paddle2onnx
print("paddle", paddle.__version__, "paddle2onnx", paddle2onnx.__version__, "onnxruntime", ort.__version__)
scale = paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(np.array([1.0, 2.0, 3.0, 4.0], "float32")))
bn = paddle.nn.BatchNorm1D(4, data_format="NLC", weight_attr=scale)  # mean 0, variance 1, bias 0: y = x * scale
bn.eval()
path = tempfile.mkdtemp() + "/bn"
paddle.onnx.export(bn, path, input_spec=[paddle.static.InputSpec([1, 4, 4], "float32", name="x")])  # N, L = 4, C = 4
model = onnx.load(path + ".onnx")
x = np.ones((1, 4, 4), "float32")
y = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
eager = bn(paddle.to_tensor(x)).numpy()
print("exported ops:", [n.op_type for n in model.graph.node])
print("eager y[0]:   ", eager[0].round(3).tolist(), "\nexported y[0]:", y[0].round(3).tolist())
raise SystemExit(0 if np.allclose(y, eager) else 1)
