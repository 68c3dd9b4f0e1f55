"""The one-node ONNX Conv / ConvTranspose model, shared by every path that runs a hand-built ONNX graph.

tvm-onnx-import, onnxruntime and openvino all read the same model: built with
onnx.helper, checked with onnx.checker, weights as initializers (as in a real
exported model). ONNX convolutions are channels-first only: channels_last cases wrap
the node in two Transpose nodes, an exact permutation recorded as such. With
`use_output_shape`, transposed cases state their output length by ConvTranspose's
`output_shape` instead of `output_padding` and `pads` (importers treat the two
differently). Pure except build_model(), which imports onnx; nothing here imports a runtime.

An epilogue (harness.model.case.EPILOGUE_OPS) follows the node as ONNX nodes, as an exporter
writes them, so a runtime's own graph fusions (Conv+Mul, Conv+BatchNormalization, Conv+Relu)
see them: Mul/Div/Add with per-channel initializers shaped (C, 1, ..., 1) or scalar ones,
BatchNormalization (inference, epsilon 1e-5), Relu, Clip(0, 6), LeakyRelu(0.1), Sigmoid, Tanh,
Gelu (ai.onnx opset 20: a case with gelu is built at opset 20, what torch.onnx exports at
opset >= 20), HardSwish, silu as Mul(v, Sigmoid(v)) (ai.onnx has no Silu/Swish up to opset 22),
Clip(-1, 1), and Add of a second graph input per residual (case layout). The epilogue runs in
NC*, between the node and channels_last's Transpose back; a channels_last residual is
Transposed to NC* first.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from backends.base import Unsupported
from backends.pads import explicit_pads, flat_pads
from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, EPILOGUE_OPS, LEAKY_SLOPE, Case

OPSET = 18
GELU_OPSET = 20  # Gelu enters ai.onnx at opset 20
BFLOAT16_OPSET = 22  # Conv / ConvTranspose take bfloat16 from opset 22 on (openvino runs such models)
ONNX_EPILOGUE_OPS = EPILOGUE_OPS  # every epilogue op has an ONNX spelling (silu as its definition)
ACTIVATION_NODES = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "gelu": "Gelu", "hardswish": "HardSwish"}
AFFINE_NODES = {"scale": "Mul", "divide": "Div", "shift": "Add", "mul_scalar": "Mul", "add_scalar": "Add"}
CLIP_BOUNDS = {"relu6": (0.0, 6.0), "clamp": CLAMP_RANGE}
BN_INPUTS = ("gamma", "beta", "mean", "var")  # BatchNormalization's scale, B, input_mean, input_var
ONNX_DTYPES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16"}  # ONNX Conv's type constraint T
Node = tuple[str, list[str], list[str], dict[str, Any]]


def opset_for(case: Case) -> int:
    """The model's ai.onnx opset: 22 for bfloat16, 20 where the epilogue has a Gelu, else 18."""
    if case.dtype == "bfloat16":
        return BFLOAT16_OPSET
    return GELU_OPSET if "gelu" in case.epilogue else OPSET


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
    conv_in, out = "x", "y_nc" if case.channels_last else "y"
    if case.channels_last:
        nodes.append(("Transpose", ["x"], ["x_nc"], {"perm": [0, r + 1, *range(1, r + 1)]}))
        conv_in = "x_nc"
    names = [conv_in, "w"] + (["b"] if bias else [])
    conv_out = "z" if case.epilogue else out
    nodes.append(("ConvTranspose" if case.transpose else "Conv", names, [conv_out], attrs))
    nodes += epilogue_nodes(case, conv_out, out)
    if case.channels_last:
        nodes.append(("Transpose", ["y_nc"], ["y"], {"perm": [0, *range(2, r + 2), 1]}))
    return nodes


def residual_inputs(case: Case) -> list[str]:
    """The residuals' graph input names (case layout), in epilogue order: inputs after x."""
    return [f"residual{i}" for i, name in enumerate(case.epilogue) if name == "residual"]


def residual_arrays(case: Case, inputs: Any) -> tuple[np.ndarray, ...]:
    """The residual arrays of `inputs` (harness.numerics.inputs.Inputs), fed after x in that order."""
    return tuple(c["r"] for name, c in zip(case.epilogue, inputs.epilogue) if name == "residual")


def epilogue_nodes(case: Case, src: str, out: str) -> list[Node]:
    """The epilogue's nodes in NC*, from `src` (the conv's output) to `out`; initializers and
    residual inputs are named by epilogue position (epilogue_initializers, residual_inputs)."""
    nodes: list[Node] = []
    v = src
    for i, name in enumerate(case.epilogue):
        dst = out if i == len(case.epilogue) - 1 else f"e{i}"
        nodes += _op_nodes(case, i, name, v, dst)
        v = dst
    return nodes


def _op_nodes(case: Case, i: int, name: str, v: str, dst: str) -> list[Node]:
    """The node(s) of epilogue op `name` at position i, reading v and writing dst."""
    if name in ACTIVATION_NODES:
        return [(ACTIVATION_NODES[name], [v], [dst], {})]
    if name in CLIP_BOUNDS:
        return [("Clip", [v, f"clip{i}_min", f"clip{i}_max"], [dst], {})]
    if name == "leaky_relu":
        return [("LeakyRelu", [v], [dst], {"alpha": LEAKY_SLOPE})]
    if name == "silu":  # ai.onnx has no Silu/Swish (up to opset 22): its definition, as exporters write it
        return [("Sigmoid", [v], [f"e{i}_sigmoid"], {}), ("Mul", [v, f"e{i}_sigmoid"], [dst], {})]
    if name == "batch_norm":
        return [("BatchNormalization", [v, *(f"bn{i}_{k}" for k in BN_INPUTS)], [dst], {"epsilon": BATCH_NORM_EPS})]
    if name == "residual":
        if not case.channels_last:
            return [("Add", [v, f"residual{i}"], [dst], {})]
        r = case.rank
        return [("Transpose", [f"residual{i}"], [f"residual{i}_nc"], {"perm": [0, r + 1, *range(1, r + 1)]}),
                ("Add", [v, f"residual{i}_nc"], [dst], {})]
    return [(AFFINE_NODES[name], [v, f"{name}{i}"], [dst], {})]


def epilogue_initializers(case: Case, constants: tuple[dict[str, np.ndarray], ...],
                          dtype: np.dtype) -> dict[str, np.ndarray]:
    """Initializer name -> array (case dtype): per-channel constants shaped (C, 1, ..., 1) to
    broadcast along NC*'s channel axis, scalars shaped (), BatchNormalization's vectors (C,)."""
    per = (-1, *(1,) * case.rank)
    out: dict[str, np.ndarray] = {}
    for i, (name, consts) in enumerate(zip(case.epilogue, constants)):
        if name in ("scale", "divide", "shift"):
            out[f"{name}{i}"] = np.asarray(consts["c"]).reshape(per)
        elif name in ("mul_scalar", "add_scalar"):
            out[f"{name}{i}"] = np.asarray(consts["c"]).reshape(())
        elif name == "batch_norm":
            out.update({f"bn{i}_{k}": np.asarray(consts[k]) for k in BN_INPUTS})
        elif name in CLIP_BOUNDS:
            lo, hi = CLIP_BOUNDS[name]
            out.update({f"clip{i}_min": np.asarray(lo).astype(dtype), f"clip{i}_max": np.asarray(hi).astype(dtype)})
    return out


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
    out = "z" if case.epilogue else "y"
    lines = [f"node = onnx.helper.make_node({node!r}, {names!r}, [{out!r}], "
             + ", ".join(f"{k}={v!r}" for k, v in attrs.items()) + f")  # opset {opset_for(case)}, w/b initializers"]
    lines += epilogue_lines(case)
    if case.channels_last:
        notes = [*notes, "channels_last: Transpose to NC* before the node and back after (ONNX Conv is NC* only)"]
        lines.insert(0, "Transpose(x, perm=NC*) -> node -> Transpose(y, perm=N*C)")
    return lines, notes


def epilogue_lines(case: Case) -> list[str]:
    """The epilogue's nodes as translation lines (NC*, before channels_last's Transpose back)."""
    if not case.epilogue:
        return []
    per = f"({case.out_channels}, {', '.join('1' * case.rank)})"
    shapes = {"scale": per, "divide": per, "shift": per, "mul_scalar": "()", "add_scalar": "()"}
    lines = []
    for op, ins, outs, kw in epilogue_nodes(case, "z", "y"):
        args = ", ".join(ins) + "".join(f", {k}={v!r}" for k, v in kw.items())
        consts = [f"{n} {shapes[n.rstrip('0123456789')]}" for n in ins[1:] if n.rstrip("0123456789") in shapes]
        lines.append(f"{outs[0]} = {op}({args})" + (f"  # initializer {', '.join(consts)}" if consts else ""))
    where = "in NC*, before the Transpose back; " if case.channels_last else ""
    opset = f"opset {opset_for(case)}" + (" (Gelu enters ai.onnx at 20)" if "gelu" in case.epilogue else "")
    return [f"# epilogue nodes on the node's output z ({where}{opset}; constants are case-dtype initializers):", *lines]


def build_model(case: Case, w: np.ndarray, b: np.ndarray | None, attrs: dict[str, Any],
                epilogue: tuple[dict[str, np.ndarray], ...] = ()) -> Any:
    """The checked ModelProto: the node, then the epilogue's nodes with `epilogue` (the case's
    constants, inputs.epilogue) as initializers (onnx.checker raises on a model the spec forbids)."""
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
    inits += [init(a, name) for name, a in epilogue_initializers(case, epilogue, w.dtype).items()]
    x_dtype = case.tensor_dtypes[0]  # an invalid case's x may be stated in another dtype: declared as it is
    x_elem = elem if x_dtype == case.dtype else onnx.TensorProto.BFLOAT16 if x_dtype == "bfloat16" else \
        helper.np_dtype_to_tensor_dtype(np.dtype(x_dtype))
    graph_inputs = [helper.make_tensor_value_info("x", x_elem, list(case.input_shape))]
    graph_inputs += [helper.make_tensor_value_info(n, elem, output_dims(case)) for n in residual_inputs(case)]
    graph = helper.make_graph(
        nodes, "convdiff", graph_inputs, [helper.make_tensor_value_info("y", elem, output_dims(case))],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_for(case))])
    onnx.checker.check_model(model)
    return model
