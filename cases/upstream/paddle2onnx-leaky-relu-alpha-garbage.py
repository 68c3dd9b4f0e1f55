"""paddle2onnx exports F.leaky_relu's negative_slope as a garbage LeakyRelu alpha (different on every run)

Project: PaddlePaddle/Paddle2ONNX (https://github.com/PaddlePaddle/Paddle2ONNX/issues)
Upstream: none found
Related: https://github.com/PaddlePaddle/Paddle/pull/75547 (Paddle made leaky_relu's negative_slope a double in C++)
Checked: 2026-11-28, paddlepaddle 3.3.1, paddle2onnx 2.1.0, searched PaddlePaddle/Paddle2ONNX issues for "LeakyRelu alpha", "leaky_relu negative_slope", "leaky_relu wrong result onnx"

What happens: paddle.onnx.export (paddle2onnx 2.1.0, the PIR path, opset 9) of a layer computing
F.leaky_relu(x, negative_slope=0.1) writes a LeakyRelu node whose alpha attribute is not 0.1 but an arbitrary
float that changes from run to run (measured 2026-11-28: 2133.1 and -1.85e-25 in two runs; earlier 2.05e34, 0.552;
with negative_slope 0.01: -1.99e38; 0.2: 3.15e32). Every negative output of the exported model is then wrong:
(alpha - 0.1) * x, 6.4e3 at x = -3 for alpha 2133.1, 0.3 when alpha comes out near 0; positive outputs are right, as
is eager paddle. ONNX Runtime computes the exported alpha faithfully (graph optimizations on or off, measured
2026-11-24): the exporter, not the runtime.

Expected: LeakyRelu alpha = negative_slope (0.1). The reference here is the ONNX LeakyRelu definition
(y = x for x >= 0, alpha * x otherwise) evaluated in NumPy with alpha = 0.1, against the same formula with the
exported alpha.

Mechanism: LeakyReluMapper (paddle2onnx/mapper/activation/activation.h) declares `float alpha_;` uninitialized and
fills it with GetAttr("alpha", &alpha_). The PIR program's pd_op.leaky_relu has no "alpha" attribute: it has
"negative_slope", a double since Paddle PR 75547. The mapper never reads the slope, and alpha_ keeps whatever was in
memory: a garbage value that differs per run. (How GetAttr treats the missing name was not traced.)

Host: any.
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
