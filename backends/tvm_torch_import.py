"""TVM via its PyTorch importer: torch.nn module -> torch.export -> from_exported_program.

This is the path that once lost output_padding and mislaid transposed kernel
layouts, so the importer itself is under test: the module holds the case's weights
as parameters (the importer bakes them in as constants), and its forward is what a
user would write. Torch is imported only on a cache miss: a warm run loads the
compiled library and never exports.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.case import Case
from harness.inputs import Inputs

from .base import Capabilities, Output, Rejected, first_line
from .torch_backend import TorchBackend
from .tvm_backend import TvmBase
from .tvm_cache import array_digest

MODULE = {"conv": "Conv{r}d", "conv_transpose": "ConvTranspose{r}d"}


class TvmTorchImportBackend(TvmBase):
    """torch.nn.ConvNd / ConvTransposeNd, exported and imported into Relax."""

    name = "tvm-torch-import"
    capabilities = Capabilities(
        padding=("symmetric", "same (conv, stride 1)", "valid (conv)"),
        padding_identities=("asymmetric conv: F.pad in forward, then VALID", "same with stride > 1: explicit pads",
                            "asymmetric transpose: symmetric then slice in forward"),
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
    )

    def plan(self, case: Case) -> tuple[str, dict[str, Any], list | None, list | None, list[str], list[str]]:
        """Module class, its kwargs, input pad, output crop, translation lines and notes."""
        kw, pre_pad, crop, notes = TorchBackend().translate(case)  # the same identities as the torch backend
        cls = MODULE[case.family].format(r=case.rank)
        args = {"in_channels": case.in_channels, "out_channels": case.out_channels,
                "kernel_size": case.kernel_size, "bias": case.bias, **kw}
        lines = [f"m = torch.nn.{cls}(" + ", ".join(f"{k}={v!r}" for k, v in args.items())
                 + f", dtype=torch.{case.dtype})  # weight/bias = case inputs"]
        body = ["x = x.movedim(-1, 1)"] if case.channels_last else []
        if pre_pad:
            body.append(f"x = F.pad(x, {[v for pair in reversed(pre_pad) for v in pair]})")
        body.append("y = self.m(x)")
        if crop:
            body.append("y = y[:, :, " + ", ".join(f"{cb}:{-ca or None}" for cb, ca in crop) + "]")
        if case.channels_last:
            body.append("y = y.movedim(1, -1)")
            notes = [*notes, "channels_last: movedim to NC* and back inside forward (torch.export has no memory format)"]
        lines += ["forward: " + "; ".join(body),
                  "mod = from_exported_program(torch.export.export(model, (x,)))"]
        return cls, args, pre_pad, crop, lines, notes

    def make_module(self, case: Case, inputs: Inputs, cls: str, args: dict[str, Any],
                    pre_pad: list | None, crop: list | None) -> Any:
        """Export the module and import it into Relax (torch imported here, on a cache miss)."""
        import torch
        import torch.nn.functional as F
        from tvm.relax.frontend.torch import from_exported_program

        def to_t(a: np.ndarray) -> Any:
            if a.dtype.name == "bfloat16":
                return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
            return torch.from_numpy(a)

        dtype = getattr(torch, case.dtype)

        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.m = getattr(torch.nn, cls)(**args, dtype=dtype)
                with torch.no_grad():
                    self.m.weight.copy_(to_t(inputs.w))
                    if inputs.b is not None:
                        self.m.bias.copy_(to_t(inputs.b))

            def forward(self, x: Any) -> Any:
                if case.channels_last:
                    x = x.movedim(-1, 1)
                if pre_pad:
                    x = F.pad(x, [v for pair in reversed(pre_pad) for v in pair])
                y = self.m(x)
                if crop:
                    y = y[(slice(None), slice(None), *(slice(cb, y.shape[2 + i] - ca) for i, (cb, ca) in enumerate(crop)))]
                if case.channels_last:
                    y = y.movedim(1, -1)
                return y

        model = Model().eval()
        example = to_t(inputs.x)
        with torch.no_grad():
            ep = torch.export.export(model, (example,))
        return from_exported_program(ep, unwrap_unit_return_tuple=True)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        cls, args, pre_pad, crop, lines, notes = self.plan(case)
        key = self.key(case, device, weights=array_digest(inputs.w, inputs.b))

        def make_mod() -> Any:
            try:
                return self.make_module(case, inputs, cls, args, pre_pad, crop)
            except Exception as exc:  # noqa: BLE001 - export or import failed: a finding
                raise Rejected(first_line(exc)) from None

        vm, how = self.compile_cached(key, device, make_mod)
        arr, dtype = self.invoke(vm, [inputs.x], device)
        lines += [how, "y = relax.VirtualMachine(exe, dev)['main'](x)"]
        return Output(np.asarray(arr), dtype, "\n".join(lines), notes=notes)
