"""BatchNorm with data_format NLC / NHWC / NDHWC is exported as a BatchNormalization over the wrong axis (no Transpose)

Kind: wrong-value
Ask: a fix: transpose around the BatchNormalization, or raise for channels-last.

What happens: Exporting BatchNorm1D(4, data_format="NLC") writes one BatchNormalization on the (N, L, C) input, so the scale lands on L. With L == C the model is silently wrong; otherwise ONNX Runtime refuses it.

Expected: Paddle's values; ONNX BatchNormalization takes channels on axis 1.

Mechanism: BatchNormMapper (paddle2onnx/mapper/nn/batch_norm.h) reads data_format in its PIR constructor, but Opset7 (batch_norm.cc) never uses it. An older version asserted NCHW (PR #449).
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
