"""ONNX side of `convdiff extract` (run as `python -m harness.commands.extract.onnx_probe`, in its own process).

onnx's shape inference gives every Conv/ConvTranspose input and output shape; the node's
attributes are read as the operator spec defines them (defaults included): auto_pad
(NOTSET, SAME_UPPER, SAME_LOWER, VALID), pads (all begins, then all ends), strides,
dilations, group, kernel_shape (else the weight's), ConvTranspose output_padding and
output_shape (which, when given, decides the pads), and the optional bias input. Shapes
that inference leaves unknown, and with `run` every conv output, come from one
onnxruntime run of the model with those tensors exposed: the sizes actually produced.
"""

from __future__ import annotations

import sys
from typing import Any

import onnx
from onnx import helper, shape_inference

from harness.commands.extract.layer import LayerConv, onnx_style, transpose_crop
from harness.commands.extract.probe_io import ProbeError, main

DTYPES = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.DOUBLE: "float64",
          onnx.TensorProto.FLOAT16: "float16", onnx.TensorProto.BFLOAT16: "bfloat16"}


def _set_input_shape(model: onnx.ModelProto, shape: list[int]) -> None:
    """--input-shape: the dims of the model's one real (non-initializer) input."""
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        raise ProbeError(f"--input-shape needs a model with one input, this one has {len(inputs)}")
    dims = inputs[0].type.tensor_type.shape.dim
    if len(dims) != len(shape):
        raise ProbeError(f"--input-shape has {len(shape)} dims, the model's input '{inputs[0].name}' has {len(dims)}")
    for d, n in zip(dims, shape):
        d.Clear()
        d.dim_value = n


def _shapes(model: onnx.ModelProto) -> tuple[dict[str, list[int | None]], dict[str, int]]:
    shapes: dict[str, list[int | None]] = {}
    types: dict[str, int] = {}
    g = model.graph
    for vi in [*g.input, *g.value_info, *g.output]:
        t = vi.type.tensor_type
        if t.HasField("shape"):
            shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        types[vi.name] = t.elem_type
    for init in g.initializer:
        shapes[init.name] = list(init.dims)
        types[init.name] = init.data_type
    return shapes, types


def _static(name: str, shape: list[int | None] | None, node: onnx.NodeProto) -> list[int]:
    if shape is None or any(d is None for d in shape):
        raise ProbeError(f"node '{node.name or node.op_type}': the shape of '{name}' is not static ({shape}); "
                         "give --input-shape")
    return [int(d) for d in shape]  # type: ignore[arg-type]


def describe(node: onnx.NodeProto, shapes: dict[str, Any], types: dict[str, int]) -> LayerConv:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    x = _static(node.input[0], shapes.get(node.input[0]), node)
    w = _static(node.input[1], shapes.get(node.input[1]), node)
    rank = len(x) - 2
    transpose = node.op_type == "ConvTranspose"
    kernel = tuple(attrs.get("kernel_shape", w[2:]))
    stride = tuple(attrs.get("strides", [1] * rank))
    dilation = tuple(attrs.get("dilations", [1] * rank))
    group = int(attrs.get("group", 1))
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    out_pad = tuple(attrs.get("output_padding", [0] * rank))
    pads = onnx_style(attrs.get("pads", [0] * 2 * rank), rank)
    padding: Any = pads
    extend = out_pad
    if auto_pad == "VALID":
        padding = "valid" if not any(out_pad) else tuple((0, 0) for _ in range(rank))
    elif transpose and ("output_shape" in attrs or auto_pad in ("SAME_UPPER", "SAME_LOWER")):
        if auto_pad == "SAME_UPPER" and "output_shape" not in attrs and not any(out_pad):
            padding = "same"  # output L*s, odd crop at the end: the case's transposed SAME
        else:
            wanted = attrs.get("output_shape") or [n * s for n, s in zip(x[2:], stride)]
            wanted = wanted[-rank:]
            pairs, ext = [], []
            for n, k, s, d, op, o in zip(x[2:], kernel, stride, dilation, out_pad, wanted):
                crop, tail = transpose_crop((n - 1) * s + d * (k - 1) + 1 + op, int(o), auto_pad == "SAME_UPPER")
                pairs.append(crop)
                ext.append(op + tail)
            padding, extend = tuple(pairs), tuple(ext)
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if auto_pad == "SAME_UPPER":
            padding = "same"
        else:
            pairs = []
            for n, k, s, d in zip(x[2:], kernel, stride, dilation):
                total = max((-(-n // s) - 1) * s + d * (k - 1) + 1 - n, 0)
                pairs.append((total - total // 2, total // 2))
            padding = tuple(pairs)
    out = shapes.get(node.output[0])
    return LayerConv(
        name=node.name or f"{node.op_type}:{node.output[0]}",
        op=f"{'conv_transpose' if transpose else 'conv'}{rank}d", batch=x[0], in_channels=x[1],
        out_channels=w[1] * group if transpose else w[0], input_size=tuple(x[2:]), kernel_size=kernel,
        stride=stride, padding=padding, output_padding=extend if transpose else (0,) * rank, dilation=dilation,
        groups=group, bias=len(node.input) > 2 and node.input[2] != "", layout="channels_first",
        dtype=DTYPES.get(types.get(node.input[0], 1), "float32"),
        out_size=tuple(out[2:]) if out and all(d is not None for d in out[2:]) else None,
    )


def _known(shape: list[int | None] | None) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _run_shapes(model: onnx.ModelProto, names: list[str], shapes: dict[str, Any],
                types: dict[str, int]) -> dict[str, list[int | None]]:
    """The shapes of these tensors as onnxruntime actually produces them (random inputs,
    the tensors exposed as outputs)."""
    import numpy as np
    import onnxruntime as ort

    m = onnx.ModelProto()
    m.CopyFrom(model)
    known = {o.name for o in m.graph.output}
    for name in names:
        if name not in known:
            m.graph.output.append(helper.make_tensor_value_info(name, types.get(name, 0), None))
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        shape = shapes.get(i.name)
        if not _known(shape):
            raise ProbeError(f"the model's input '{i.name}' has no static shape ({shape}); give --input-shape")
        dtype = helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
        feeds[i.name] = rng.standard_normal(shape).astype(dtype)
    try:
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        values = sess.run(names, feeds)
    except Exception as exc:  # noqa: BLE001  (onnxruntime's errors share no base class)
        raise ProbeError(f"onnxruntime could not run the model to measure its shapes: {str(exc).splitlines()[0]}") from None
    return {name: list(v.shape) for name, v in zip(names, values)}


def probe(model: str, input_shape: list[int] | None, run: bool = False, **_: Any) -> list[LayerConv]:
    try:
        m = onnx.load(model)
    except Exception as exc:  # noqa: BLE001  (protobuf raises its own DecodeError and friends)
        raise ProbeError(f"not an ONNX model ({type(exc).__name__}: {exc})") from None
    if m.functions:
        m = onnx.inliner.inline_local_functions(m)
    if input_shape:
        _set_input_shape(m, input_shape)
    try:
        inferred = shape_inference.infer_shapes(m, data_prop=True)
    except Exception as exc:  # noqa: BLE001  (InferenceError and checker errors share no base class)
        raise ProbeError(f"onnx shape inference failed: {str(exc).splitlines()[0]}") from None
    shapes, types = _shapes(inferred)
    convs = [n for n in inferred.graph.node if n.op_type in ("Conv", "ConvTranspose")]
    # Shapes that inference cannot give (e.g. after a Pad whose pads are computed) are taken from
    # one onnxruntime run; with `run`, every conv output too: the sizes actually produced.
    need = {t for n in convs for t in n.input[:2] if not _known(shapes.get(t))}
    need |= {n.output[0] for n in convs} if run else set()
    if need:
        shapes.update(_run_shapes(inferred, sorted(need), shapes, types))
    return [describe(n, shapes, types) for n in convs]


if __name__ == "__main__":
    sys.exit(main(probe))
