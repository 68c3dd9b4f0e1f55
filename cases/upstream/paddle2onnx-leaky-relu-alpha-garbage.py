"""[PIR] F.leaky_relu is exported with a garbage LeakyRelu alpha: LeakyReluMapper reads "alpha", the PIR op calls it "negative_slope"

Kind: wrong-value
Ask: a fix: read negative_slope in LeakyReluMapper for PIR programs, and initialize alpha_.

What happens: Exporting F.leaky_relu(x, negative_slope=0.1) writes a LeakyRelu whose alpha changes from run to run (-2.1e-27, -58.2, -6.8e10 here; 0.0, 2.05e34 elsewhere).

Expected: alpha = negative_slope.

Mechanism: LeakyReluMapper (paddle2onnx/mapper/activation/activation.h) declares `float alpha_;` and fills it with GetAttr("alpha"), but pd_op.leaky_relu has only "negative_slope" (a double since Paddle PR #75547), so nothing is written. PR #1647 (for #1646) accepts a DoubleAttribute in GetOpAttr(float*); the lookup by "alpha" still finds nothing.
"""
import sys
import tempfile
import onnx
import paddle
import paddle2onnx
print("paddle", paddle.__version__, "paddle2onnx", paddle2onnx.__version__)
class Net(paddle.nn.Layer):
    def forward(self, x):
        return paddle.nn.functional.leaky_relu(x, negative_slope=0.1)
path = tempfile.mkdtemp() + "/leaky"
paddle.onnx.export(Net(), path, input_spec=[paddle.static.InputSpec([1, 8], "float32")])
node = [n for n in onnx.load(path + ".onnx").graph.node if n.op_type == "LeakyRelu"][0]
alpha = [onnx.helper.get_attribute_value(a) for a in node.attribute if a.name == "alpha"][0]
print("negative_slope 0.1 -> exported LeakyRelu alpha", alpha)
sys.exit(0 if abs(alpha - 0.1) < 1e-6 else 1)
