"""paddle2onnx exports F.leaky_relu(x, negative_slope=SLOPE) wrong: compare Paddle eager vs the exported ONNX in ORT."""
import os
import tempfile
import numpy as np
import paddle
import paddle.nn.functional as F
import paddle2onnx
import onnx
import onnxruntime as ort

import sys; SLOPE = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
class L(paddle.nn.Layer):
    def forward(self, x):
        return F.leaky_relu(x, negative_slope=SLOPE)

x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 1, 8)
d = tempfile.mkdtemp()
paddle.onnx.export(L(), os.path.join(d, "m"), input_spec=[paddle.static.InputSpec([1, 1, 8], "float32", name="x")])
m = onnx.load(os.path.join(d, "m.onnx"))
print("paddle", paddle.__version__, "paddle2onnx", paddle2onnx.__version__, "opset", m.opset_import[0].version)
print([(n.op_type, [(a.name, onnx.helper.get_attribute_value(a)) for a in n.attribute]) for n in m.graph.node])
print("paddle:", L()(paddle.to_tensor(x)).numpy().ravel())
for level in ("ORT_ENABLE_ALL", "ORT_DISABLE_ALL"):
    so = ort.SessionOptions(); so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    print(level, ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0].ravel())
