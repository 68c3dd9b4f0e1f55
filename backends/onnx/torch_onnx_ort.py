"""torch.onnx.export -> ONNX Runtime: the path a PyTorch model takes to deployment.

A torch.nn.ConvNd / ConvTransposeNd module holding the case's weights (its forward is
what a user writes: the torch backend's own identities for what nn modules cannot say,
F.pad before an asymmetric conv, a slice after an asymmetric transpose, movedim for
channels_last) is exported by `torch.onnx.export` with the pinned torch's default
exporter (torch.export-based since torch 2.9) and default opset, into memory, and run by
ONNX Runtime. The exporter and the opset it wrote are recorded in the translation.
Only torch, onnx and onnxruntime are imported in the worker.

The exported model (or the exporter's refusal) is cached per case (backends/artifacts.py, kind
`torch-onnx`), keyed by the case, its baked arrays, torch's and onnxscript's versions and the
sources that write the module: a warm run exports nothing.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any

import numpy as np

from backends import torch_epilogue
from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Capabilities, Output, Rejected, first_line
from backends.onnx.onnxruntime_backend import OrtBase
from backends.torch_module import conv_module, epilogue_lines, module_plan, to_tensor
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs

SOURCES = ("onnx/torch_onnx_ort.py", "torch_module.py", "torch_epilogue.py")  # what writes the module


def converter_version() -> str:
    import importlib.metadata as md

    try:
        return md.version("onnxscript")
    except md.PackageNotFoundError:
        return "none"


class TorchOnnxOrtBackend(OrtBase):
    """torch.nn module -> torch.onnx.export (default exporter, default opset) -> onnxruntime."""
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "torch-onnx-ort"
    epilogue_ops = EPILOGUE_OPS  # in the module's forward: exported as ONNX nodes after the conv
    runtime_name = "torch-onnx-ort"
    capabilities = Capabilities(
        padding=("symmetric", "same (conv, stride 1)", "valid (conv)"),
        padding_identities=("asymmetric conv: F.pad in forward, then VALID", "same with stride > 1: explicit pads",
                            "asymmetric transpose: symmetric then slice in forward"),
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
        dtypes=("float32", "float16 (CPU: float32 between Casts ORT inserts)", "float64: where the provider registers it (CPU: no)"),
    )

    def converter_modules(self) -> tuple[tuple[str, str], ...]:
        return (("torch", "torch"), ("onnxscript", "converters"))

    def setup(self, device: str) -> None:
        super().setup(device)
        import inspect

        import torch

        self.torch = torch
        dynamo = inspect.signature(torch.onnx.export).parameters["dynamo"].default
        self.exporter = f"default exporter (dynamo={dynamo}: {'torch.export-based' if dynamo else 'TorchScript'})"
        self.cache = ArtifactCache("torch-onnx")
        self.salt = {"torch": str(torch.__version__), "onnxscript": converter_version(),
                     "exporter": self.exporter, "sources": sources_digest(SOURCES)}

    def version(self) -> str:
        import importlib.metadata as md

        try:
            return f"torch {md.version('torch')} + onnxruntime {md.version('onnxruntime')}"
        except md.PackageNotFoundError:
            return "unknown"

    def fingerprint(self, device: str) -> dict[str, str]:
        return {**super().fingerprint(device), "torch": str(self.torch.__version__)}

    def supports(self, case: Case, device: str) -> str | None:
        return self.runtime_reason(case, device)

    def export(self, case: Case, inputs: Inputs, cls: str, args: dict[str, Any], pre_pad: list | None,
               crop: list | None) -> bytes:
        """The module with the case's weights, exported by torch.onnx.export into memory."""
        torch = self.torch
        model = conv_module(case, inputs, cls, args, pre_pad, crop, epilogue=bool(case.epilogue))
        residuals = torch_epilogue.residuals(case, inputs.epilogue)
        buf = io.BytesIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (to_tensor(inputs.x), *map(to_tensor, residuals.values())), buf,
                              input_names=["x", *residuals], output_names=["y"])
        return buf.getvalue()

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        cls, args, pre_pad, crop, body, notes = module_plan(case)
        files, _ = self.cache.fetch(case_key(case, inputs, self.salt),
                                    lambda: {"model.onnx": self.export(case, inputs, cls, args, pre_pad, crop)},
                                    first_line)  # the exporter refused: a finding
        if isinstance(files, str):
            raise Rejected(files)
        model = files["model.onnx"]
        lines = [f"m = torch.nn.{cls}(" + ", ".join(f"{k}={v!r}" for k, v in args.items())
                 + f", dtype=torch.{case.dtype})  # weight/bias = case inputs",
                 "forward: " + "; ".join(body), *epilogue_lines(case, inputs.epilogue),
                 f"torch.onnx.export(model, (x, *residuals), f, input_names=['x', *residuals], output_names=['y'])"
                 f"  # {self.exporter}; {exported_by(model)}",
                 self.session_line(device).replace("model.SerializeToString()", "f.getvalue()"),
                 "y = sess.run(None, {'x': x, **residuals})[0]"]
        more = tuple(torch_epilogue.residuals(case, inputs.epilogue).values())
        arr, dtype = self.run_model(model, inputs.x, device, more)
        return Output(np.asarray(arr), dtype, "\n".join(lines), notes=notes)


def exported_by(model: bytes) -> str:
    """'<producer> <version>, opset N': who wrote the ONNX model and for which default-domain opset."""
    import onnx

    proto = onnx.load_from_string(model)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), "?")
    producer = f"{proto.producer_name} {proto.producer_version}".strip()
    return f"{producer}, opset {opset}" if producer else f"opset {opset} (no producer recorded)"
