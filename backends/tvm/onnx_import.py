"""TVM via its ONNX importer: the one-node Conv / ConvTranspose model (backends/onnx/model.py) -> from_onnx.

The importer folds the weight initializers into constants, as for a real exported
model. The `-output-shape` variant gives transposed cases their output length through
ConvTranspose's `output_shape` attribute instead of `pads` (and of `output_padding`,
unless the crop needs it): importers treat the two differently. An epilogue is the same
ONNX nodes onnxruntime and openvino run (backends/onnx/model.py): its constants are
initializers the importer folds, each residual a graph input passed at run time.
"""

from __future__ import annotations

from typing import Any

from backends.base import Capabilities, Output, Rejected, first_line
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
from backends.tvm.cache import array_digest
from backends.tvm.direct import TvmBase
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class TvmOnnxImportBackend(TvmBase):
    """Conv / ConvTranspose with pads, strides, dilations, group, output_padding; SAME_UPPER for same."""

    name = "tvm-onnx-import"
    use_output_shape = False
    epilogue_ops = ONNX_EPILOGUE_OPS
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float64", "float16"),
    )

    def supports(self, case: Case, device: str) -> str | None:
        return dtype_reason(case)

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
        dtypes=("float32", "float64", "float16"),
    )
