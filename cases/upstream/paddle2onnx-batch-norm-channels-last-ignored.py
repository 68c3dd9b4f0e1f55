"""paddle2onnx exports F.batch_norm(..., data_format='NDHWC'/'NHWC') as a BatchNormalization on channels-last data."""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import paddle
import paddle.nn.functional as F

fmt = sys.argv[1] if len(sys.argv) > 1 else "NDHWC"
shape = {"NDHWC": [1, 7, 7, 7, 4], "NHWC": [1, 7, 7, 4], "NLC": [1, 7, 4]}[fmt]
class L(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        for k, v in zip("mvgb", (0.0, 1.0, 2.0, 0.5)):
            self.register_buffer(k, paddle.to_tensor(np.full(4, v, np.float32)))

    def forward(self, x):
        return F.batch_norm(x, self.m, self.v, self.g, self.b, training=False, epsilon=1e-5, data_format=fmt)

d = tempfile.mkdtemp()
paddle.onnx.export(L(), os.path.join(d, "m"), input_spec=[paddle.static.InputSpec(shape, "float32", name="x")])
m = onnx.load(os.path.join(d, "m.onnx"))
print(fmt, "ops:", [n.op_type for n in m.graph.node])
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
try:
    y = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    print("max |onnx - paddle|:", np.abs(y - L()(paddle.to_tensor(x)).numpy()).max())
except Exception as exc:
    print(type(exc).__name__, str(exc).splitlines()[0][:200])
