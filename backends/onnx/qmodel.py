"""The quantized (uint8/int8) ONNX models: QLinearConv, and the QDQ form, for every path that runs ONNX.

The semantics are harness/numerics/quant.py's (the ONNX QLinearConv definition): x in the case
dtype, w int8 in the canonical layout, bias int32 at scale x_scale * w_scale[c]. Two forms, as
ONNX Runtime's quantization tool writes them:

- `qlinear` (QOperator format; conv ops only): one QLinearConv node, inputs
  (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B): w_scale and
  w_zero_point 1-D of length C_out when per-channel, scalars when per-tensor; B int32.
- `qdq` (QDQ format; all six ops): DequantizeLinear(x) and DequantizeLinear(w) (per-channel:
  axis 0 of a conv's (C_out, C_in/g, *k) weight, axis 1 of a transposed (C_in, C_out/g, *k)
  weight) and DequantizeLinear(bias int32, scale x_scale*w_scale rounded to float32, axis 0)
  into a float Conv/ConvTranspose, then QuantizeLinear(y_scale, y_zero_point). Runtimes fuse the
  group into integer kernels (ORT: QLinearConv; OpenVINO: its low-precision transformations).

Transposed per-channel weights with groups > 1: DequantizeLinear's per-axis scale on axis 1 has
C_out/g entries, one per output channel *within* a group, shared by every group; the case's C_out
scales are expressible only when each group repeats the same C_out/g scales. Otherwise the case is
unsupported (no per-axis form states it; blocked quantization, opset 21, would, but no runtime here
fuses it into an integer kernel).

channels_last: the integer tensors are Transposed to NC* before and back after (exact permutations).
An epilogue is not built on a quantized model (unsupported). Scales are float32 initializers
(what frameworks store); zero points carry the tensor's integer type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.onnx.model import OPSET, Node
from harness.model.case import Case
from harness.numerics.inputs import Inputs

FORMS = ("qlinear", "qdq")
ONNX_INT = {"uint8": "UINT8", "int8": "INT8"}
QLINEAR_INPUTS = ["x_nc", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"]


def form_for(case: Case, prefer: str) -> str:
    """The form a quantized case is built in: QLinearConv exists for forward convs only."""
    return "qlinear" if prefer == "qlinear" and not case.transpose else "qdq"


def transposed_axis1_scales(case: Case, w_scale: np.ndarray) -> np.ndarray | None:
    """The C_out/g axis-1 scales of a transposed weight, or None when the groups' scales differ."""
    g = max(case.groups, 1)
    rows = np.asarray(w_scale, dtype=np.float64).reshape(g, case.out_channels // g)
    return rows[0] if np.all(rows == rows[0]) else None


def quant_reason(case: Case, inputs: Inputs | None = None) -> str | None:
    """Why the quantized ONNX model cannot state this case (None when it can)."""
    if case.epilogue:
        return "the quantized ONNX model has no epilogue nodes (QLinearConv / QDQ conv alone)"
    if case.transpose and case.groups > 1 and inputs is not None and inputs.quant is not None \
            and inputs.quant.per_channel and transposed_axis1_scales(case, inputs.quant.w_scale) is None:
        return ("ONNX DequantizeLinear per-axis scales on axis 1 of a (C_in, C_out/g, *k) ConvTranspose weight "
                f"are C_out/g = {case.out_channels // case.groups} values shared by all {case.groups} groups; "
                "this case's per-channel scales differ between groups")
    return None


def quant_nodes(case: Case, attrs: dict[str, Any], form: str, bias: bool) -> list[Node]:
    """The model's nodes (op, inputs, outputs, attributes), pure."""
    r = case.rank
    nodes: list[Node] = []
    x = "x"
    if case.channels_last:
        nodes.append(("Transpose", ["x"], ["x_nc"], {"perm": [0, r + 1, *range(1, r + 1)]}))
        x = "x_nc"
    out = "y_nc" if case.channels_last else "y"
    if form == "qlinear":
        names = [x, *QLINEAR_INPUTS[1:]] + (["b"] if bias else [])
        nodes.append(("QLinearConv", names, [out], attrs))
    else:
        w_axis = {"axis": 1 if case.transpose else 0}
        nodes.append(("DequantizeLinear", [x, "x_scale", "x_zero_point"], ["x_f"], {}))
        nodes.append(("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["w_f"], w_axis))
        names = ["x_f", "w_f"]
        if bias:
            nodes.append(("DequantizeLinear", ["b", "b_scale"], ["b_f"], {"axis": 0}))
            names.append("b_f")
        nodes.append(("ConvTranspose" if case.transpose else "Conv", names, ["y_f"], attrs))
        nodes.append(("QuantizeLinear", ["y_f", "y_scale", "y_zero_point"], [out], {}))
    if case.channels_last:
        nodes.append(("Transpose", ["y_nc"], ["y"], {"perm": [0, *range(2, r + 2), 1]}))
    return nodes


def quant_initializers(case: Case, inputs: Inputs, form: str) -> dict[str, np.ndarray]:
    """Initializer name -> array: w int8, b int32, float32 scales, zero points in their tensor's type."""
    p = inputs.quant
    assert p is not None
    xt = np.uint8 if case.dtype == "uint8" else np.int8
    sw = np.asarray(p.w_scale, dtype=np.float64)
    if form == "qdq" and case.transpose and p.per_channel:
        axis1 = transposed_axis1_scales(case, sw)
        assert axis1 is not None, "quant_reason() refuses this case"
        sw_w = axis1
    else:
        sw_w = sw
    out = {
        "x_scale": np.asarray(p.x_scale, np.float32), "x_zero_point": np.asarray(p.x_zero_point, xt),
        "w": np.ascontiguousarray(inputs.w, dtype=np.int8),
        "w_scale": sw_w.astype(np.float32) if p.per_channel else np.asarray(sw[0], np.float32),
        "w_zero_point": (np.full(sw_w.shape, p.w_zero_point, np.int8) if p.per_channel
                         else np.asarray(p.w_zero_point, np.int8)),
        "y_scale": np.asarray(p.y_scale, np.float32), "y_zero_point": np.asarray(p.y_zero_point, xt),
    }
    if inputs.b is not None:
        out["b"] = np.asarray(inputs.b, np.int32)
        if form == "qdq":  # the bias scale a quantizer writes: x_scale * w_scale, a float32 tensor
            prod = np.float32(p.x_scale) * sw.astype(np.float32)
            out["b_scale"] = prod if p.per_channel else np.asarray(prod[0], np.float32)
    return out


def build_quant_model(case: Case, inputs: Inputs, attrs: dict[str, Any], form: str) -> Any:
    """The checked ModelProto of `form` (onnx.checker raises on a model the spec forbids)."""
    import onnx
    from onnx import helper, numpy_helper

    elem = getattr(onnx.TensorProto, ONNX_INT[case.dtype])
    nodes = [helper.make_node(op, ins, outs, **kw) for op, ins, outs, kw in
             quant_nodes(case, attrs, form, inputs.b is not None)]
    inits = [numpy_helper.from_array(a, name) for name, a in quant_initializers(case, inputs, form).items()]
    dims = list(case.output_shape) if case.geometry else [f"d{i}" for i in range(case.rank + 2)]
    graph = helper.make_graph(nodes, "convdiff_quant", [helper.make_tensor_value_info("x", elem, list(case.input_shape))],
                              [helper.make_tensor_value_info("y", elem, dims)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def quant_lines(case: Case, attrs: dict[str, Any], form: str, inputs: Inputs, notes: list[str]) -> tuple[list[str], list[str]]:
    """The model as translation lines, and the notes with them."""
    p = inputs.quant
    per = p is not None and p.per_channel
    kw = ", ".join(f"{k}={v!r}" for k, v in attrs.items())
    wshape = f"({case.out_channels},)" if per else "()"
    lines: list[str] = []
    if form == "qlinear":
        b = ", 'b'" if case.bias else ""
        lines.append(f"node = onnx.helper.make_node('QLinearConv', ['x', 'x_scale', 'x_zero_point', 'w', 'w_scale', "
                     f"'w_zero_point', 'y_scale', 'y_zero_point'{b}], ['y'], {kw})  # opset {OPSET}; w int8, "
                     f"w_scale/w_zero_point {wshape} float32/int8, b int32, scales float32 initializers")
    else:
        op = "ConvTranspose" if case.transpose else "Conv"
        axis = 1 if case.transpose else 0
        wpc = (f"per-channel axis={axis}, scale ({case.out_channels // max(case.groups, 1) if case.transpose else case.out_channels},)"
               if per else "per-tensor")
        lines += [f"x_f = DequantizeLinear(x, x_scale, x_zero_point)  # opset {OPSET}, x {case.dtype}",
                  f"w_f = DequantizeLinear(w int8, w_scale, w_zero_point, axis={axis})  # {wpc}"]
        if case.bias:
            lines.append("b_f = DequantizeLinear(b int32, b_scale = float32(x_scale * w_scale), axis=0)")
        lines += [f"y_f = {op}(x_f, w_f{', b_f' if case.bias else ''}, {kw})",
                  "y = QuantizeLinear(y_f, y_scale, y_zero_point)"]
        if case.transpose and per and case.groups > 1:
            notes = [*notes, "grouped per-channel ConvTranspose: the groups share the same C_out/g scales, "
                             "so DequantizeLinear axis=1 states them exactly"]
    if case.channels_last:
        lines.insert(0, "Transpose(x, perm=NC*) -> model -> Transpose(y, perm=N*C)")
        notes = [*notes, "channels_last: Transpose of the integer tensors to NC* before and back after"]
    return lines, notes


def optimized_ops(path: str) -> list[str]:
    """The op types (domain-qualified outside ai.onnx) of a model ONNX Runtime saved after optimization."""
    import onnx

    m = onnx.load(path)
    return [n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}" for n in m.graph.node]
