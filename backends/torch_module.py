"""A torch nn.ConvNd / nn.ConvTransposeNd module holding a case's weights: what the importer
and exporter paths (tvm-torch-import, torch-onnx-ort) hand to their converters.

The module uses the torch backend's own translation (the same identities), with the input
pad and output crop inside forward, and channels_last as movedim around the layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.torch_backend import TorchBackend
from harness.model.case import Case
from harness.numerics.inputs import Inputs

MODULE = {"conv": "Conv{r}d", "conv_transpose": "ConvTranspose{r}d"}


def module_plan(case: Case) -> tuple[str, dict[str, Any], list | None, list | None, list[str], list[str]]:
    """Module class, its kwargs, input pad, output crop, the forward as code lines, and notes (pure)."""
    kw, pre_pad, crop, notes = TorchBackend().translate(case)  # the torch backend's identities, unchanged
    cls = MODULE[case.family].format(r=case.rank)
    args = {"in_channels": case.in_channels, "out_channels": case.out_channels,
            "kernel_size": case.kernel_size, "bias": case.bias, **kw}
    body = ["x = x.movedim(-1, 1)"] if case.channels_last else []
    if pre_pad:
        body.append(f"x = F.pad(x, {[v for pair in reversed(pre_pad) for v in pair]})")
    body.append("y = self.m(x)")
    if crop:
        body.append("y = y[:, :, " + ", ".join(f"{cb}:{-ca or None}" for cb, ca in crop) + "]")
    if case.channels_last:
        body.append("y = y.movedim(1, -1)")
        notes = [*notes, "channels_last: movedim to NC* and back inside forward (an exported graph has no memory format)"]
    return cls, args, pre_pad, crop, body, notes


def conv_module(case: Case, inputs: Inputs, cls: str, args: dict[str, Any], pre_pad: list | None,
                crop: list | None) -> Any:
    """The module of `module_plan`, weights set, in eval mode (imports torch: call it in a worker)."""
    import torch
    import torch.nn.functional as F

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = getattr(torch.nn, cls)(**args, dtype=getattr(torch, case.dtype))
            with torch.no_grad():
                self.m.weight.copy_(to_tensor(inputs.w))
                if inputs.b is not None:
                    self.m.bias.copy_(to_tensor(inputs.b))

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

    return Model().eval()


def to_tensor(a: np.ndarray) -> Any:
    """numpy (bfloat16 included, via its bits) -> torch, without a copy."""
    import torch

    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)
