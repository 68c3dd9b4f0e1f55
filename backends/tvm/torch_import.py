"""TVM via its PyTorch importer: torch.nn module -> torch.export -> from_exported_program.

This is the path that once lost output_padding and mislaid transposed kernel
layouts, so the importer itself is under test: the module holds the case's weights
as parameters (the importer bakes them in as constants), and its forward is what a
user would write. Torch is imported only on a cache miss: a warm run loads the
compiled library and never exports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from backends.base import Capabilities, Output, Rejected, first_line
from backends.torch import epilogue as torch_epilogue
from backends.torch.eager import invalid_padding_reason
from backends.torch.module import conv_module, epilogue_lines, module_plan, to_tensor
from backends.tvm.cache import array_digest
from backends.tvm.direct import TvmBase
from backends.tvm.torch_batch import Member, import_batch
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs


class TvmTorchImportBackend(TvmBase):
    """torch.nn.ConvNd / ConvTransposeNd, exported and imported into Relax."""

    name = "tvm-torch-import"
    model_sources = ("backends.torch.module", "backends.torch.epilogue", "backends.torch.eager")  # what writes the imported model (source_digest)
    epilogue_ops = EPILOGUE_OPS  # in the module's forward, imported with it
    capabilities = Capabilities(
        padding=("symmetric", "same (conv, stride 1)", "valid (conv)"),
        padding_identities=("asymmetric conv: F.pad in forward, then VALID", "same with stride > 1: explicit pads",
                            "asymmetric transpose: symmetric then slice in forward"),
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
        unbatched=True, torch_same=True,  # the module takes them as torch does: exported and imported as given
    )

    def supports(self, case: Case, device: str) -> str | None:
        return invalid_padding_reason(case)

    def plan(self, case: Case) -> tuple[str, dict[str, Any], list | None, list | None, list[str], list[str]]:
        """Module class, its kwargs, input pad, output crop, translation lines and notes."""
        cls, args, pre_pad, crop, body, notes = module_plan(case)  # the torch backend's identities
        lines = [f"m = torch.nn.{cls}(" + ", ".join(f"{k}={v!r}" for k, v in args.items())
                 + f", dtype=torch.{case.dtype})  # weight/bias = case inputs"]
        lines += ["forward: " + "; ".join(body),
                  "mod = from_exported_program(torch.export.export(model, (x,)))"]
        return cls, args, pre_pad, crop, lines, notes

    def make_module(self, case: Case, inputs: Inputs, cls: str, args: dict[str, Any],
                    pre_pad: list | None, crop: list | None) -> Any:
        """Export the module and import it into Relax (torch imported here, on a cache miss)."""
        import torch
        from tvm.relax.frontend.torch import from_exported_program

        model = conv_module(case, inputs, cls, args, pre_pad, crop, epilogue=bool(case.epilogue))
        example = (to_tensor(inputs.x), *map(to_tensor, torch_epilogue.residuals(case, inputs.epilogue).values()))
        with torch.no_grad():
            ep = torch.export.export(model, example)
        return from_exported_program(ep, unwrap_unit_return_tuple=True)

    def batch_modules(self, entries: list[tuple[str, Callable[[], Any]]]) -> list[tuple[str, Callable[[], Any]]]:
        """The members of one batch imported together (backends/tvm/torch_batch.py); a member that must
        import alone keeps its own factory."""
        alone = [(key, make) for key, make in entries if isinstance(make, ImportAlone)]
        if len(alone) < 2:
            return entries
        mods = dict(zip((key for key, _ in alone), import_batch([make.member for _, make in alone])))
        return [(key, make if mods.get(key) is None else (lambda mod=mods[key]: mod)) for key, make in entries]

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        cls, args, pre_pad, crop, lines, notes = self.plan(case)
        lines[-1:-1] = epilogue_lines(case, inputs.epilogue)
        key = self.key(case, device, weights=array_digest(inputs.w, inputs.b, *(
            v for c in inputs.epilogue for k, v in sorted(c.items()) if k != "r")), epilogue=list(case.epilogue))

        vm, how = self.compile_cached(key, device, ImportAlone(self, (case, inputs, (cls, args, pre_pad, crop))))
        arr, dtype = self.invoke(vm, [inputs.x, *torch_epilogue.residuals(case, inputs.epilogue).values()], device)
        lines += [how, "y = relax.VirtualMachine(exe, dev)['main'](x)"]
        return Output(np.asarray(arr), dtype, "\n".join(lines), notes=notes)


class ImportAlone:
    """A case's module exported and imported on its own (the unbatched path); `member` is what a batch needs."""

    def __init__(self, backend: TvmTorchImportBackend, member: Member) -> None:
        self.backend, self.member = backend, member

    def __call__(self) -> Any:
        case, inputs, (cls, args, pre_pad, crop) = self.member
        try:
            return self.backend.make_module(case, inputs, cls, args, pre_pad, crop)
        except Exception as exc:  # noqa: BLE001 - export or import failed: a finding
            raise Rejected(first_line(exc)) from None
