"""The source of `build_model(w, b)`: the checked ONNX model of backends/onnx/model.py, as code.

Shared by the reproducers of every backend that hands such a model to a runtime or an importer
(onnxruntime, openvino, tvm-onnx-import and its output_shape variant). An epilogue case's model
has the epilogue's nodes after the conv, its constants as initializers (read from the script's
NAMED arrays, shaped as backends/onnx/model.py epilogue_initializers shapes them) and one graph
input per residual after x.
"""

from __future__ import annotations

import textwrap
from typing import Any

from backends.onnx.model import CLIP_BOUNDS, ONNX_DTYPES, graph_nodes, opset_for, output_dims, residual_inputs
from harness.model.case import Case
from reports.repro.torch_module import kwargs_source


def build_model_source(backend: str, case: Case, attrs: dict[str, Any]) -> str:
    """`def build_model(w, b)` building the model the adapter builds from these node attributes."""
    nodes = ",\n".join("helper.make_node(" + ", ".join([repr(op), repr(ins), repr(outs), *([kwargs_source(kw)] if kw else [])]) + ")"
                       for op, ins, outs, kw in graph_nodes(case, attrs, case.bias))
    inits = ['numpy_helper.from_array(w, "w")', *(['numpy_helper.from_array(b, "b")'] if case.bias else []),
             *_epilogue_initializers(case)]
    inputs = [f'helper.make_tensor_value_info("x", elem, {list(case.input_shape)})',
              *(f"helper.make_tensor_value_info({n!r}, elem, {output_dims(case)})" for n in residual_inputs(case))]
    return f'''def build_model(w, b):
    """The model convdiff's {backend} adapter builds (opset {opset_for(case)}, w/b{" and the epilogue's constants"
                                                                               if case.epilogue else ""} initializers)."""
    elem = onnx.TensorProto.{ONNX_DTYPES[case.dtype]}
    nodes = [
{textwrap.indent(nodes, " " * 8)},
    ]
    inits = [
{textwrap.indent(",".join(chr(10) + i for i in inits).lstrip(chr(10)), " " * 8)},
    ]
    inputs = [
{textwrap.indent(",".join(chr(10) + i for i in inputs).lstrip(chr(10)), " " * 8)},
    ]
    graph = helper.make_graph(nodes, "convdiff", inputs, [helper.make_tensor_value_info("y", elem, {output_dims(case)})],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", {opset_for(case)})])
    onnx.checker.check_model(model)
    return model
'''


def _epilogue_initializers(case: Case) -> list[str]:
    """The epilogue's initializers as code (case dtype): per-channel (C, 1, ...), scalars (), batch norm's
    vectors (C,), Clip's bounds."""
    per = (-1, *(1,) * case.rank)
    out: list[str] = []
    for i, name in enumerate(case.epilogue):
        if name in ("scale", "divide", "shift"):
            out.append(f'numpy_helper.from_array(NAMED["{name}{i}"].reshape({per}).astype(DTYPE), "{name}{i}")')
        elif name in ("mul_scalar", "add_scalar"):
            out.append(f'numpy_helper.from_array(NAMED["{name}{i}"].reshape(()).astype(DTYPE), "{name}{i}")')
        elif name == "batch_norm":
            out += [f'numpy_helper.from_array(NAMED["bn{i}_{k}"].astype(DTYPE), "bn{i}_{k}")'
                    for k in ("gamma", "beta", "mean", "var")]
        elif name in CLIP_BOUNDS:
            lo, hi = CLIP_BOUNDS[name]
            out += [f'numpy_helper.from_array(np.asarray({lo!r}).astype(DTYPE), "clip{i}_min")',
                    f'numpy_helper.from_array(np.asarray({hi!r}).astype(DTYPE), "clip{i}_max")']
    return out
