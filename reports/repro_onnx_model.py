"""The source of `build_model(w, b)`: the checked one-node ONNX model of backends/onnx/model.py, as code.

Shared by the reproducers of every backend that hands such a model to a runtime or an importer
(onnxruntime, openvino, tvm-onnx-import and its output_shape variant).
"""

from __future__ import annotations

import textwrap
from typing import Any

from backends.onnx.model import ONNX_DTYPES, OPSET, graph_nodes, output_dims
from harness.model.case import Case
from reports.repro_torch_module import kwargs_source


def build_model_source(backend: str, case: Case, attrs: dict[str, Any]) -> str:
    """`def build_model(w, b)` building the model the adapter builds from these node attributes."""
    nodes = ",\n".join(f"helper.make_node({op!r}, {ins!r}, {outs!r}, {kwargs_source(kw)})"
                       for op, ins, outs, kw in graph_nodes(case, attrs, case.bias))
    inits = ('[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]' if case.bias
             else '[numpy_helper.from_array(w, "w")]')
    return f'''def build_model(w, b):
    """The one-node model convdiff's {backend} adapter builds (opset {OPSET}, w/b initializers)."""
    elem = onnx.TensorProto.{ONNX_DTYPES[case.dtype]}
    nodes = [
{textwrap.indent(nodes, " " * 8)},
    ]
    graph = helper.make_graph(
        nodes, "convdiff", [helper.make_tensor_value_info("x", elem, {list(case.input_shape)})],
        [helper.make_tensor_value_info("y", elem, {output_dims(case)})], initializer={inits})
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", {OPSET})])
    onnx.checker.check_model(model)
    return model
'''
