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

Batched export (issue 26, `prepare`): the modules of up to `batch_size` uncached cases, side by
side in one module (member i's inputs and outputs prefixed `b<i>_`), go through one
torch.onnx.export (its fixed cost, ~0.7 s, is most of a small conv's export); each member's model
is then cut out of the result (backends/onnx/split.py) and stored under the case's own key, as its
own export would be. A batch the exporter refuses is halved; a case that fails alone is left to
run(), which exports it alone and records its own refusal.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any

import numpy as np

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Capabilities, Output, Rejected, first_line, given_inputs
from backends.onnx import split
from backends.onnx.onnxruntime_backend import OrtBase
from backends.torch import epilogue as torch_epilogue
from backends.torch.eager import TORCH_TEMPLATE, invalid_padding_reason
from backends.torch.module import conv_module, epilogue_lines, module_plan, side_by_side, to_tensor
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs

# what writes the module (the split cuts a member's model out of a batched export: it writes it too)
SOURCES = ("onnx/torch_onnx_ort.py", "torch/module.py", "torch/epilogue.py", "onnx/split.py")


def converter_version() -> str:
    import importlib.metadata as md

    try:
        return md.version("onnxscript")
    except md.PackageNotFoundError:
        return "none"


class TorchOnnxOrtBackend(OrtBase):
    """torch.nn module -> torch.onnx.export (default exporter, default opset) -> onnxruntime."""
    # the exporter (which meets dynamo, then onnxscript's IR, then AOT's partitioner networkx: 0.75 s a fork)
    # and the model splitter
    preload = (*TORCH_TEMPLATE, "onnxruntime", "onnx", "torch._dynamo", "torch.onnx._internal.exporter._core", "networkx")
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "torch-onnx-ort"
    batch_size = 32  # cases per batched export (prepare)
    epilogue_ops = EPILOGUE_OPS  # in the module's forward: exported as ONNX nodes after the conv
    runtime_name = "torch-onnx-ort"
    capabilities = Capabilities(
        padding=("symmetric", "same (conv, stride 1)", "valid (conv)"),
        padding_identities=("asymmetric conv: F.pad in forward, then VALID", "same with stride > 1: explicit pads",
                            "asymmetric transpose: symmetric then slice in forward"),
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
        dtypes=("float32", "float16 (CPU: float32 between Casts ORT inserts)", "float64: where the provider registers it (CPU: no)"),
        unbatched=True, torch_same=True,  # the module takes them as torch does: exported as given
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
        return invalid_padding_reason(case) or self.runtime_reason(case, device)

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

    def prepare(self, cases: list[Case], device: str, inputs: list[Inputs] | None = None) -> dict[str, int]:
        """Export the uncached cases `batch_size` at a time and store each member's model (module doc)."""
        if self.cache.root is None:
            return {"batched": 0}
        todo = []
        for case, data in given_inputs(cases, inputs):
            if case.geometry is None or self.epilogue_reason(case) or self.supports(case, device):
                continue
            key = case_key(case, data, self.salt)
            if self.cache.load(key) is None:
                cls, args, pre_pad, crop, _, _ = module_plan(case)
                todo.append((key, case, data, (cls, args, pre_pad, crop)))
        done = sum(self._export_batch(todo[i:i + self.batch_size]) for i in range(0, len(todo), self.batch_size))
        return {"to_build": len(todo), "batched": done}

    def _export_batch(self, items: list[tuple[str, Case, Inputs, tuple]]) -> int:
        """Export `items` as one module, store each member's model; halve on a refusal. Cases stored."""
        if len(items) < 2:
            return 0  # alone: run() exports it and records its own answer
        try:
            cut = self._export_members([item[1:] for item in items])
        except Exception:  # noqa: BLE001 - a member the exporter refuses: find it by halving
            half = len(items) // 2
            return self._export_batch(items[:half]) + self._export_batch(items[half:])
        note = f"cut out of one torch.onnx.export of {len(items)} cases (backends/onnx/split.py)\n".encode()
        for (key, *_), model in zip(items, cut):
            self.cache.store(key, {"model.onnx": model, "batched.txt": note})
        return len(items)

    def _export_members(self, items: list[tuple[Case, Inputs, tuple]]) -> list[bytes]:
        """One torch.onnx.export of the members side by side, cut into one model per member."""
        import onnx

        torch = self.torch
        models, flat, in_names, members = [], [], [], []
        for i, (case, inputs, plan) in enumerate(items):
            models.append(conv_module(case, inputs, *plan, epilogue=bool(case.epilogue)))
            residuals = torch_epilogue.residuals(case, inputs.epilogue)
            flat.extend([to_tensor(inputs.x), *map(to_tensor, residuals.values())])
            names = ["x", *residuals]
            in_names.extend(split.member_names(i, names))
            members.append(split.by_prefix(i, names, ["y"]))

        buf = io.BytesIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
            warnings.simplefilter("ignore")
            batch = side_by_side(models, [len(inputs) for inputs, _ in members])
            torch.onnx.export(batch, tuple(flat), buf, input_names=in_names,
                              output_names=[n for i in range(len(items)) for n in split.member_names(i, ["y"])])
        return split.split(onnx.load_from_string(buf.getvalue()), members)

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
