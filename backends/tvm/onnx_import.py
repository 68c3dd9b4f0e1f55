"""TVM via its ONNX importer: the one-node Conv / ConvTranspose model (backends/onnx/model.py) -> from_onnx.

The importer folds the weight initializers into constants, as for a real exported
model. The `-output-shape` variant gives transposed cases their output length through
ConvTranspose's `output_shape` attribute instead of `pads` (and of `output_padding`,
unless the crop needs it): importers treat the two differently. An epilogue is the same
ONNX nodes onnxruntime and openvino run (backends/onnx/model.py): its constants are
initializers the importer folds, each residual a graph input passed at run time.

Quantized cases (uint8/int8): the model onnxruntime reads (backends/onnx/qmodel.py), QLinearConv
for conv ops and the QDQ form for conv_transpose ops. The Relax importer converts
DequantizeLinear/QuantizeLinear (float math between them) but has no QLinearConv converter: a conv
case is then rejected with the importer's own error (TVM raises on a valid model).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from backends.base import Capabilities, Output, Rejected, Unsupported, first_line
from backends.onnx.model import (
    ONNX_EPILOGUE_OPS,
    build_model,
    builder_digest,
    dtype_reason,
    node_attributes,
    node_lines,
    opset_for,
    residual_arrays,
    residual_inputs,
)
from backends.onnx.qmodel import build_quant_model, form_for, quant_lines, quant_reason
from backends.tvm.cache import array_digest
from backends.tvm.direct import TvmBase
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class TvmOnnxImportBackend(TvmBase):
    """Conv / ConvTranspose with pads, strides, dilations, group, output_padding; SAME_UPPER for same."""

    name = "tvm-onnx-import"
    model_sources = ("backends.onnx.model", "backends.onnx.qmodel")  # what writes the imported model (source_digest)
    use_output_shape = False
    epilogue_ops = ONNX_EPILOGUE_OPS
    quant_form = "qlinear"  # the model onnxruntime reads: QLinearConv (conv ops), QDQ (conv_transpose ops)
    quantized = "the ONNX QLinearConv (conv ops) / QDQ (conv_transpose ops) model through from_onnx"
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float64", "float16", "uint8, int8: QLinearConv (conv), QDQ (conv_transpose)"),
    )

    def supports(self, case: Case, device: str) -> str | None:
        return quant_reason(case) if case.quantized else dtype_reason(case)

    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]:
        """The node's attributes, the translation lines and the notes (pure: shared with the repro script)."""
        attrs, notes = node_attributes(case, self.use_output_shape)
        lines, notes = node_lines(case, attrs, notes)
        shapes = ", ".join(f"{n!r}: {shape}" for n, shape in self.input_shapes(case).items())
        lines.append(f"onnx.checker.check_model(model); mod = from_onnx(model, shape_dict={{{shapes}}})")
        return attrs, lines, notes

    @staticmethod
    def input_shapes(case: Case) -> dict[str, list[int]]:
        """The graph inputs' shapes: x, then each residual (y's shape, case layout)."""
        return {"x": list(case.input_shape), **{n: list(case.output_shape) for n in residual_inputs(case)}}

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if case.quantized:
            return self.run_quantized(case, inputs, device)
        attrs, lines, notes = self.plan(case)
        consts = [a for name, c in zip(case.epilogue, inputs.epilogue) if name != "residual" for a in c.values()]
        key = self.key(case, device, weights=array_digest(inputs.w, inputs.b, *consts), attrs=attrs,
                       opset=opset_for(case), builder=builder_digest(), epilogue=case.epilogue)

        def make_mod() -> Any:
            from tvm.relax.frontend.onnx import from_onnx

            try:
                model = build_model(case, inputs.w, inputs.b, attrs, inputs.epilogue)
                shapes = self.input_shapes(case)
                return from_onnx(model, shape_dict=shapes, dtype_dict=dict.fromkeys(shapes, case.dtype))
            except Exception as exc:  # noqa: BLE001 - checker or importer refused: a finding
                raise Rejected(first_line(exc)) from None

        vm, how = self.compile_cached(key, device, make_mod)
        arr, dtype = self.invoke(vm, [inputs.x, *residual_arrays(case, inputs)], device)
        lines += [how, "y = relax.VirtualMachine(exe, dev)['main'](x)"]
        return Output(arr, dtype, "\n".join(lines), notes=notes)

    def run_quantized(self, case: Case, inputs: Inputs, device: str) -> Output:
        """The quantized ONNX model (backends/onnx/qmodel.py) through from_onnx, x in the case dtype."""
        reason = quant_reason(case, inputs)
        if reason:
            raise Unsupported(reason)
        form = form_for(case, self.quant_form)
        attrs, notes = node_attributes(case, self.use_output_shape)
        lines, notes = quant_lines(case, attrs, form, inputs, notes)
        shapes = {"x": list(case.input_shape)}
        lines.append(f"onnx.checker.check_model(model); mod = from_onnx(model, shape_dict={shapes!r}, "
                     f"dtype_dict={{'x': {case.dtype!r}}})")
        p = inputs.quant
        assert p is not None
        key = self.key(case, device, weights=array_digest(inputs.w, inputs.b, p.w_scale), attrs=attrs, form=form,
                       qparams=[p.x_scale, p.x_zero_point, p.w_zero_point, p.y_scale, p.y_zero_point, p.per_channel],
                       builder=QMODEL_DIGEST)

        def make_mod() -> Any:
            from tvm.relax.frontend.onnx import from_onnx

            try:
                model = build_quant_model(case, inputs, attrs, form)
                return from_onnx(model, shape_dict=shapes, dtype_dict={"x": case.dtype})
            except Exception as exc:  # noqa: BLE001 - checker or importer refused: a finding
                raise Rejected(first_line(exc)) from None

        vm, how = self.compile_cached(key, device, make_mod)
        arr, dtype = self.invoke(vm, [inputs.x], device)
        lines += [how, "y = relax.VirtualMachine(exe, dev)['main'](x)"]
        return Output(arr, dtype, "\n".join(lines), notes=notes)


QMODEL_DIGEST = hashlib.sha256((Path(__file__).resolve().parent.parent / "onnx" / "qmodel.py").read_bytes()).hexdigest()[:16]


class TvmOnnxOutputShapeBackend(TvmOnnxImportBackend):
    """Transposed cases state their output length with `output_shape` (no pads; output_padding beside it
    only where output_shape alone cannot state the case's crop, as the ONNX spec's total_padding allows)."""

    name = "tvm-onnx-import-output-shape"
    use_output_shape = True
    capabilities = Capabilities(
        padding=("symmetric (odd crop first)", "same (SAME_UPPER + output_shape)", "valid"),
        padding_identities=("explicit pads with odd crop last: SAME_UPPER + output_shape",),
        output_padding="via output_shape (and output_padding where output_shape alone cannot say it)",
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float64", "float16", "uint8, int8: QLinearConv (conv), QDQ (conv_transpose)"),
    )
