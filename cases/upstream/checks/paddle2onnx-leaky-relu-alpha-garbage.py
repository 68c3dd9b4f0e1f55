"""paddle2onnx: the LeakyRelu alpha exported for F.leaky_relu (PIR)

Exports F.leaky_relu(x, negative_slope=0.1) with paddle.onnx.export, reads the LeakyRelu node's alpha with onnx,
and compares eager Paddle and the exported node's function with the float64 reference on x in [-3, 3]. Exit 1 when
the exported alpha is not the negative_slope.
"""
import os
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore", message="No ccache found")  # printed by paddle's import on hosts without ccache
import onnx  # paddle2onnx's own output format (a dependency of paddle2onnx)
import paddle
import paddle.nn.functional as F
import paddle2onnx

SLOPE = 0.1


class Net(paddle.nn.Layer):
    def forward(self, x):
        return F.leaky_relu(x, negative_slope=SLOPE)


paddle.set_device("cpu")
print(f"paddle {paddle.__version__}, paddle2onnx {paddle2onnx.__version__}")
x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 1, 8)
with tempfile.TemporaryDirectory() as tmp:
    try:
        paddle.onnx.export(Net(), os.path.join(tmp, "m"),
                           input_spec=[paddle.static.InputSpec([1, 1, 8], "float32", name="x")])
        model = onnx.load(os.path.join(tmp, "m.onnx"))
    except Exception as exc:  # not expected: said in one line rather than a traceback
        print(f"export failed: {str(exc).strip().splitlines()[-1][:200]}")
        sys.exit(1)
nodes = [(n.op_type, {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}) for n in model.graph.node]
print(f"exported graph (opset {model.opset_import[0].version}): {nodes}")
alphas = [attrs.get("alpha", 0.01) for op, attrs in nodes if op == "LeakyRelu"]
if not alphas:
    print("not shown: no LeakyRelu node in the export")
    sys.exit(0)
alpha = float(alphas[0])
ref = np.where(x >= 0, x, SLOPE * x).astype(np.float64)
onnx_y = np.where(x >= 0, x, alpha * x).astype(np.float64)
eager = Net()(paddle.to_tensor(x)).numpy()
print(f"LeakyRelu alpha {alpha!r}, expected {SLOPE}")
print(f"eager paddle: max |y - reference| {np.abs(eager - ref).max():.2g}; the exported model (ONNX LeakyRelu with that"
      f" alpha): max |y - reference| {np.abs(onnx_y - ref).max():.3g} at x = {float(x.ravel()[np.abs(onnx_y - ref).argmax()])}")
if abs(alpha - SLOPE) > 1e-6:
    print("defect shown: the exported alpha is not the negative_slope")
    sys.exit(1)
print("not shown: alpha equals negative_slope")
sys.exit(0)
