"""paddle2onnx: F.batch_norm with data_format NLC / NHWC / NDHWC

Exports F.batch_norm on channels-last inputs (NLC, NHWC, NDHWC; spatial length 7, C = 4) with paddle.onnx.export
and reads the graph with onnx: which ops, what the BatchNormalization reads, the scale's length. Exit 1 when a
BatchNormalization is applied to the channels-last tensor.
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

SHAPES = {"NDHWC": [1, 7, 7, 7, 4], "NHWC": [1, 7, 7, 4], "NLC": [1, 7, 4]}


class BN(paddle.nn.Layer):
    def __init__(self, fmt):
        super().__init__()
        self.fmt = fmt
        for name, v in zip("mvgb", (0.0, 1.0, 2.0, 0.5)):
            self.register_buffer(name, paddle.to_tensor(np.full(4, v, np.float32)))

    def forward(self, x):
        return F.batch_norm(x, self.m, self.v, self.g, self.b, training=False, epsilon=1e-5, data_format=self.fmt)


paddle.set_device("cpu")
print(f"paddle {paddle.__version__}, paddle2onnx {paddle2onnx.__version__}")
shown = False
for fmt, shape in SHAPES.items():
    with tempfile.TemporaryDirectory() as tmp:
        try:
            paddle.onnx.export(BN(fmt), os.path.join(tmp, "m"),
                               input_spec=[paddle.static.InputSpec(shape, "float32", name="x")])
            model = onnx.load(os.path.join(tmp, "m.onnx"))
        except Exception as exc:  # a refusal would be an acceptable answer
            print(f"{fmt}: export refused: {str(exc).strip().splitlines()[-1][:160]}")
            continue
    ops = [n.op_type for n in model.graph.node]
    consts = {t.name: list(t.dims) for t in model.graph.initializer}
    consts.update({n.output[0]: list(onnx.helper.get_attribute_value(n.attribute[0]).dims)
                   for n in model.graph.node if n.op_type == "Constant" and n.attribute})
    bn = next((n for n in model.graph.node if n.op_type == "BatchNormalization"), None)
    if bn is None:
        print(f"{fmt}: ops {ops}: no BatchNormalization")
        continue
    fed_by_input = bn.input[0] == model.graph.input[0].name
    scale_shape = consts.get(bn.input[1], "?")
    print(f"{fmt} input {shape}: ops {ops}; BatchNormalization reads "
          f"{'the channels-last graph input directly' if fed_by_input else bn.input[0]}: its axis 1 has length "
          f"{shape[1] if fed_by_input else '?'}, scale shape {scale_shape} (C = {shape[-1]})")
    shown |= fed_by_input and shape[1] != shape[-1]
if shown:
    print("defect shown: BatchNormalization is applied to a channels-last tensor")
    sys.exit(1)
print("not shown: every export normalizes the channel axis")
sys.exit(0)
