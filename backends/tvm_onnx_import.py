"""TVM via its ONNX importer: a one-node Conv / ConvTranspose model -> from_onnx.

Built with onnx.helper and checked with onnx.checker, weights as initializers (the
importer folds them into constants, as for a real exported model). ONNX convolutions
are channels-first only: channels_last cases wrap the node in two Transpose nodes,
an exact permutation recorded as such. The `-output-shape` variant gives transposed
cases their output length through ConvTranspose's `output_shape` attribute instead
of `output_padding` and `pads`: importers treat the two differently.
"""

from __future__ import annotations

from typing import Any

from harness.case import Case
from harness.inputs import Inputs

from .base import Capabilities, Output, Rejected, Unsupported, first_line
from .tvm_backend import TvmBase, explicit_pads, flat_pads
from .tvm_cache import array_digest

OPSET = 18
ONNX_DTYPES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16"}


def graph_nodes(case: Case, attrs: dict[str, Any], bias: bool) -> list[tuple[str, list[str], list[str], dict[str, Any]]]:
    """The model's nodes as (op, inputs, outputs, attributes), pure: shared with the repro script.

    channels_last wraps the Conv/ConvTranspose node in two Transpose nodes (ONNX Conv is NC* only).
    """
    r = case.rank
    nodes: list[tuple[str, list[str], list[str], dict[str, Any]]] = []
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


class TvmOnnxImportBackend(TvmBase):
    """Conv / ConvTranspose with pads, strides, dilations, group, output_padding; SAME_UPPER for same."""

    name = "tvm-onnx-import"
    use_output_shape = False
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float64", "float16"),
    )

    def supports(self, case: Case, device: str) -> str | None:
        if case.dtype not in ONNX_DTYPES:
            return f"ONNX Conv (opset {OPSET}) has no {case.dtype} type"
        return None

    def attributes(self, case: Case) -> tuple[dict[str, Any], list[str]]:
        """The node's attributes, and notes for any exact identity used."""
        attrs: dict[str, Any] = {"kernel_shape": list(case.kernel_size), "strides": list(case.stride),
                                 "dilations": list(case.dilation), "group": case.groups}
        if case.padding == "same":
            attrs["auto_pad"] = "SAME_UPPER"
        elif case.padding == "valid":
            attrs["auto_pad"] = "VALID"
        pads, out_pad = explicit_pads(case)
        if not case.transpose or not self.use_output_shape or case.geometry is None:
            # an invalid case has no output length to state: it keeps the user's pads/output_padding
            if not isinstance(case.padding, str):
                attrs["pads"] = list(flat_pads(pads))
            if case.transpose and any(case.output_padding):
                attrs["output_padding"] = list(out_pad)
            return attrs, []
        return self.output_shape_attributes(case, attrs, pads, out_pad)

    def output_shape_attributes(self, case: Case, attrs: dict[str, Any], pads: list[tuple[int, int]],
                                out_pad: tuple[int, ...]) -> tuple[dict[str, Any], list[str]]:
        """ConvTranspose with output_shape: ONNX derives the pads from it (spec: total_padding =
        F + output_padding - output_shape, split by auto_pad: SAME_UPPER puts the odd one last,
        otherwise first). Only splits the spec can produce are expressible."""
        assert case.geometry is not None
        attrs["output_shape"] = list(case.geometry.out_size)
        if isinstance(case.padding, str):
            return attrs, [f"padding '{case.padding}': auto_pad plus output_shape"]
        totals = [b + a - e for (b, a), e in zip(pads, out_pad)]
        if any(t < 0 for t in totals):
            raise Unsupported("ONNX ConvTranspose output_shape cannot express output_padding larger than "
                              "the padding (negative total_padding)")
        if all(b == t - t // 2 for (b, _), t in zip(pads, totals)):
            return attrs, []  # auto_pad NOTSET: odd element first
        if all(b == t // 2 for (b, _), t in zip(pads, totals)):
            attrs["auto_pad"] = "SAME_UPPER"
            return attrs, ["explicit padding with the odd crop last: auto_pad SAME_UPPER plus output_shape"]
        raise Unsupported("ONNX ConvTranspose output_shape derives symmetric pads (odd one first or last); "
                          f"this padding {pads} is not such a split")

    def model(self, case: Case, inputs: Inputs, attrs: dict[str, Any]) -> Any:
        """The checked one-node ModelProto."""
        import onnx
        from onnx import helper, numpy_helper

        elem = getattr(onnx.TensorProto, ONNX_DTYPES[case.dtype])
        nodes = [helper.make_node(op, ins, outs, **kw) for op, ins, outs, kw in graph_nodes(case, attrs, inputs.b is not None)]
        inits = [numpy_helper.from_array(inputs.w, "w")]
        if inputs.b is not None:
            inits.append(numpy_helper.from_array(inputs.b, "b"))
        graph = helper.make_graph(
            nodes, "convdiff", [helper.make_tensor_value_info("x", elem, list(case.input_shape))],
            [helper.make_tensor_value_info("y", elem, output_dims(case))], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model)
        return model

    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]:
        """The node's attributes, the translation lines and the notes (pure: shared with the repro script)."""
        attrs, notes = self.attributes(case)
        node = "ConvTranspose" if case.transpose else "Conv"
        inputs = ["x", "w", "b"] if case.bias else ["x", "w"]
        lines = [f"node = onnx.helper.make_node({node!r}, {inputs!r}, ['y'], "
                 + ", ".join(f"{k}={v!r}" for k, v in attrs.items()) + f")  # opset {OPSET}, w/b initializers"]
        if case.channels_last:
            notes = [*notes, "channels_last: Transpose to NC* before the node and back after (ONNX Conv is NC* only)"]
            lines.insert(0, "Transpose(x, perm=NC*) -> node -> Transpose(y, perm=N*C)")
        lines.append(f"onnx.checker.check_model(model); mod = from_onnx(model, shape_dict={{'x': {list(case.input_shape)}}})")
        return attrs, lines, notes

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        attrs, lines, notes = self.plan(case)
        key = self.key(case, device, weights=array_digest(inputs.w, inputs.b), attrs=attrs, opset=OPSET)

        def make_mod() -> Any:
            from tvm.relax.frontend.onnx import from_onnx

            try:
                model = self.model(case, inputs, attrs)
                return from_onnx(model, shape_dict={"x": list(case.input_shape)}, dtype_dict={"x": case.dtype})
            except Exception as exc:  # noqa: BLE001 - checker or importer refused: a finding
                raise Rejected(first_line(exc)) from None

        vm, how = self.compile_cached(key, device, make_mod)
        arr, dtype = self.invoke(vm, [inputs.x], device)
        lines += [how, "y = relax.VirtualMachine(exe, dev)['main'](x)"]
        return Output(arr, dtype, "\n".join(lines), notes=notes)


class TvmOnnxOutputShapeBackend(TvmOnnxImportBackend):
    """Transposed cases state their output length with `output_shape` (no output_padding, no pads)."""

    name = "tvm-onnx-import-output-shape"
    use_output_shape = True
    capabilities = Capabilities(
        padding=("symmetric (odd crop first)", "same (SAME_UPPER + output_shape)", "valid"),
        padding_identities=("explicit pads with odd crop last: SAME_UPPER + output_shape",),
        output_padding="via output_shape",
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float64", "float16"),
    )
