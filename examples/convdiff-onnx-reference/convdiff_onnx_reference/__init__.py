"""convdiff adapter for ONNX's reference evaluator: one Conv or ConvTranspose node, run by
onnx.reference.ReferenceEvaluator (pure NumPy, ONNX's executable specification)."""

from __future__ import annotations

import numpy as np

from backends.base import Backend, Capabilities, Output, Rejected, first_line, require_api

require_api(1)


class OnnxReferenceBackend(Backend):
    """ONNX's reference evaluator: Conv / ConvTranspose with explicit pads, NCHW (channels_last transposed)."""

    framework = "onnx"
    capabilities = Capabilities(devices=("cpu",))
    devices = ("cpu",)
    builds_per_case = True  # a model and an evaluator per case, run in pure Python: `make run` samples it
    known_issues_file = "known_issues.yaml"  # the divergences found in ONNX's reference, shipped with the adapter

    def setup(self, device: str) -> None:
        import onnx
        from onnx.reference import ReferenceEvaluator

        self.onnx, self.evaluator = onnx, ReferenceEvaluator

    def run(self, case, inputs, device: str) -> Output:
        h = self.onnx.helper
        elem = getattr(self.onnx.TensorProto, {"float32": "FLOAT", "float64": "DOUBLE"}.get(case.dtype, case.dtype.upper()))
        x = np.moveaxis(inputs.x, -1, 1) if case.channels_last else inputs.x  # ONNX is channels-first
        attrs = {"strides": list(case.stride), "dilations": list(case.dilation), "group": case.groups,
                 "kernel_shape": list(case.kernel_size)}
        # The padding as the case states it, never case.geometry: an `expect: invalid` case has no geometry
        # (None), and its parameters go to ONNX as they are, for ONNX to refuse (a pass when it does)
        if case.padding in ("same", "valid"):  # ONNX's own: SAME_UPPER puts the odd pad last, as TF does
            attrs["auto_pad"] = "SAME_UPPER" if case.padding == "same" else "VALID"
        else:  # (before, after) pairs: ONNX lists all befores, then all afters
            attrs["pads"] = [p[0] for p in case.padding] + [p[1] for p in case.padding]
        if case.transpose:
            attrs["output_padding"] = list(case.output_padding)
        names = ["x", "w", *(["b"] if inputs.b is not None else [])]
        node = h.make_node("ConvTranspose" if case.transpose else "Conv", names, ["y"], **attrs)
        graph = h.make_graph([node], "conv", [h.make_tensor_value_info(n, elem, None) for n in names],
                             [h.make_tensor_value_info("y", elem, None)])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 22)])
        feeds = {"x": x, "w": inputs.w, **({"b": inputs.b} if inputs.b is not None else {})}
        try:
            (y,) = self.evaluator(model).run(None, feeds)
        except Exception as exc:  # the evaluator refused a valid case
            raise Rejected(first_line(exc)) from exc
        y = np.moveaxis(y, 1, -1) if case.channels_last else y
        call = f"ReferenceEvaluator({node.op_type}({', '.join(f'{k}={v}' for k, v in attrs.items())}))"
        notes = ["channels_last transposed to NCHW and back"] if case.channels_last else []
        return Output(np.ascontiguousarray(y), str(y.dtype), call, notes=notes)
