"""The one-node ONNX Conv / ConvTranspose model, shared by every path that runs a hand-built ONNX graph.

tvm-onnx-import, onnxruntime and openvino all read the same model: built with
onnx.helper, checked with onnx.checker, weights as initializers (as in a real
exported model). ONNX convolutions are channels-first only: channels_last cases wrap
the node in two Transpose nodes, an exact permutation recorded as such. With
`use_output_shape`, transposed cases state their output length by ConvTranspose's
`output_shape` instead of `output_padding` and `pads` (importers treat the two
differently). Pure except build_model(), which imports onnx; nothing here imports a runtime.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from backends.base import Unsupported
from backends.pads import explicit_pads, flat_pads
from harness.model.case import Case

OPSET = 18
BFLOAT16_OPSET = 22  # Conv / ConvTranspose take bfloat16 from opset 22 on (openvino runs such models)
ONNX_DTYPES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16"}  # ONNX Conv's type constraint T
Node = tuple[str, list[str], list[str], dict[str, Any]]


def opset_for(case: Case) -> int:
    return BFLOAT16_OPSET if case.dtype == "bfloat16" else OPSET


def dtype_reason(case: Case) -> str | None:
    """Why ONNX cannot state this case's dtype (Conv's T is float16, float or double), or None."""
    return None if case.dtype in ONNX_DTYPES else f"ONNX Conv (opset {OPSET}) has no {case.dtype} type"


def builder_digest() -> str:
    """Digest of this module's source: a cache keyed on it is invalidated when the model changes."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def graph_nodes(case: Case, attrs: dict[str, Any], bias: bool) -> list[Node]:
    """The model's nodes as (op, inputs, outputs, attributes), pure: shared with the repro scripts.

    channels_last wraps the Conv/ConvTranspose node in two Transpose nodes (ONNX Conv is NC* only).
    """
    r = case.rank
    nodes: list[Node] = []
    conv_in, conv_out = "x", "y"
    if case.channels_last:
        nodes.append(("Transpose", ["x"], ["x_nc"], {"perm": [0, r + 1, *range(1, r + 1)]}))
        conv_in, conv_out = "x_nc", "y_nc"
    names = [conv_in, "w"] + (["b"] if bias else [])
    nodes.append(("ConvTranspose" if case.transpose else "Conv", names, [conv_out], attrs))
    if case.channels_last:
        nodes.append(("Transpose", ["y_nc"], ["y"], {"perm": [0, *range(2, r + 2), 1]}))
    return nodes


def output_dims(case: Case) -> list[int | str]:
    """The graph output's declared dims: the case's output shape, symbolic for an invalid case."""
    return list(case.output_shape) if case.geometry else [f"d{i}" for i in range(case.rank + 2)]


def node_attributes(case: Case, use_output_shape: bool = False) -> tuple[dict[str, Any], list[str]]:
    """The Conv/ConvTranspose node's attributes, and notes for any exact identity used.

    Native: pads (all befores, then all afters), strides, dilations, group, output_padding;
    same -> auto_pad SAME_UPPER (TF puts the odd pad after), valid -> auto_pad VALID.
    """
    attrs: dict[str, Any] = {"kernel_shape": list(case.kernel_size), "strides": list(case.stride),
                             "dilations": list(case.dilation), "group": case.groups}
    if case.padding == "same":
        attrs["auto_pad"] = "SAME_UPPER"
    elif case.padding == "valid":
        attrs["auto_pad"] = "VALID"
    pads, out_pad = explicit_pads(case)
    if not case.transpose or not use_output_shape or case.geometry is None:
        # an invalid case has no output length to state: it keeps the user's pads/output_padding
        if not isinstance(case.padding, str):
            attrs["pads"] = list(flat_pads(pads))
        if case.transpose and any(case.output_padding):
            attrs["output_padding"] = list(out_pad)
        return attrs, []
    return _output_shape_attributes(case, attrs, pads, out_pad)


def _output_shape_attributes(case: Case, attrs: dict[str, Any], pads: list[tuple[int, int]],
                             out_pad: tuple[int, ...]) -> tuple[dict[str, Any], list[str]]:
    """ConvTranspose with output_shape: ONNX derives the pads from it (spec: total_padding =
    F + output_padding - output_shape, split by auto_pad: SAME_UPPER puts the odd one last,
    otherwise first). Only splits the spec can produce are expressible."""
    assert case.geometry is not None
    attrs["output_shape"] = list(case.geometry.out_size)
    if isinstance(case.padding, str):
        return attrs, [f"padding '{case.padding}': auto_pad plus output_shape"]
    # output_shape alone where it can say it; else output_padding beside it, which the spec's
    # total_padding counts (then total = before + after, the crop the case asks for)
    for state_out_pad in ([False, True] if any(out_pad) else [False]):
        totals = [b + a - (0 if state_out_pad else e) for (b, a), e in zip(pads, out_pad)]
        if any(t < 0 for t in totals):
            continue
        extra = {"output_padding": list(out_pad)} if state_out_pad else {}
        if all(b == t - t // 2 for (b, _), t in zip(pads, totals)):
            return attrs | extra, []  # auto_pad NOTSET: odd element first
        if all(b == t // 2 for (b, _), t in zip(pads, totals)):
            return attrs | extra | {"auto_pad": "SAME_UPPER"}, [
                "explicit padding with the odd crop last: auto_pad SAME_UPPER plus output_shape"]
    raise Unsupported("ONNX ConvTranspose output_shape derives symmetric pads (odd one first or last, "
                      f"with or without output_padding); this padding {pads} is not such a split")


def node_lines(case: Case, attrs: dict[str, Any], notes: list[str]) -> tuple[list[str], list[str]]:
    """The model as translation lines (the node call, the layout Transposes), and the notes with them."""
    node = "ConvTranspose" if case.transpose else "Conv"
    names = ["x", "w", "b"] if case.bias else ["x", "w"]
    lines = [f"node = onnx.helper.make_node({node!r}, {names!r}, ['y'], "
             + ", ".join(f"{k}={v!r}" for k, v in attrs.items()) + f")  # opset {opset_for(case)}, w/b initializers"]
    if case.channels_last:
        notes = [*notes, "channels_last: Transpose to NC* before the node and back after (ONNX Conv is NC* only)"]
        lines.insert(0, "Transpose(x, perm=NC*) -> node -> Transpose(y, perm=N*C)")
    return lines, notes


def build_model(case: Case, w: np.ndarray, b: np.ndarray | None, attrs: dict[str, Any]) -> Any:
    """The checked one-node ModelProto (onnx.checker raises on a model the spec forbids)."""
    import onnx
    from onnx import helper, numpy_helper

    bf16 = case.dtype == "bfloat16"
    elem = onnx.TensorProto.BFLOAT16 if bf16 else getattr(onnx.TensorProto, ONNX_DTYPES[case.dtype])

    def init(a: np.ndarray, name: str) -> Any:  # numpy_helper has no bfloat16: its raw bits
        if bf16:
            return helper.make_tensor(name, elem, a.shape, np.ascontiguousarray(a).view(np.uint16).tobytes(), raw=True)
        return numpy_helper.from_array(a, name)

    nodes = [helper.make_node(op, ins, outs, **kw) for op, ins, outs, kw in graph_nodes(case, attrs, b is not None)]
    inits = [init(w, "w")]
    if b is not None:
        inits.append(init(b, "b"))
    graph = helper.make_graph(
        nodes, "convdiff", [helper.make_tensor_value_info("x", elem, list(case.input_shape))],
        [helper.make_tensor_value_info("y", elem, output_dims(case))], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_for(case))])
    onnx.checker.check_model(model)
    return model
