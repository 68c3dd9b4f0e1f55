"""A torch nn.ConvNd / nn.ConvTransposeNd module holding a case's weights: what the importer,
exporter and compiler paths (tvm-torch-import, torch-onnx-ort, torch-inductor) hand to their converters.

The module uses the torch backend's own translation (the same identities), with the input
pad and output crop inside forward, and channels_last as movedim around the layer. With
`epilogue=True` the case's epilogue follows the conv (backends/torch/epilogue.py) on the NC* tensor,
before the channels_last movedim back: its per-channel constants are buffers, each residual an input
after x. Without it (the export paths) the module and its forward are the bare conv.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.torch import epilogue as torch_epilogue
from backends.torch.eager import TorchBackend
from harness.model.case import Case
from harness.numerics.inputs import Inputs

MODULE = {"conv": "Conv{r}d", "conv_transpose": "ConvTranspose{r}d"}


def module_plan(case: Case) -> tuple[str, dict[str, Any], list | None, list | None, list[str], list[str]]:
    """Module class, its kwargs, input pad, output crop, the forward as code lines, and notes (pure)."""
    kw, pre_pad, crop, notes = TorchBackend().translate(case)  # the torch backend's identities, unchanged
    cls = MODULE[case.family].format(r=case.rank)
    args = {"in_channels": case.in_channels, "out_channels": case.out_channels,
            "kernel_size": case.kernel_size, "bias": case.bias, **kw}
    c = 0 if case.unbatched else 1  # the channel axis: an unbatched input has no batch axis
    body = [f"x = x.movedim(-1, {c})"] if case.channels_last else []
    if pre_pad:
        body.append(f"x = F.pad(x, {[v for pair in reversed(pre_pad) for v in pair]})")
    body.append("y = self.m(x)")
    if crop:
        body.append("y = y[" + ":, " * (c + 1) + ", ".join(f"{cb}:{-ca or None}" for cb, ca in crop) + "]")
    if case.channels_last:
        body.append(f"y = y.movedim({c}, -1)")
        notes = [*notes, "channels_last: movedim to NC* and back inside forward (an exported graph has no memory format)"]
    return cls, args, pre_pad, crop, body, notes


def conv_module(case: Case, inputs: Inputs, cls: str, args: dict[str, Any], pre_pad: list | None,
                crop: list | None, epilogue: bool = False) -> Any:
    """The module of `module_plan`, weights set, in eval mode (imports torch: call it in a worker).

    With `epilogue`, the case's epilogue too: forward(x, *residuals), residuals in the case layout
    in `torch_epilogue.residuals` order."""
    import torch
    import torch.nn.functional as F

    c = 0 if case.unbatched else 1  # the channel axis

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = getattr(torch.nn, cls)(**args, dtype=getattr(torch, case.dtype))
            if case.geometry is None:  # an invalid case's tensors as stated (any shape, any dtype), never cast;
                # copied into torch's own (64-byte aligned) memory, as a module's parameters are: numpy's buffer made
                # TVM's importer refuse a bfloat16 weight or not by where numpy had put it (DLPack wants 64 bytes)
                self.m.weight = torch.nn.Parameter(to_tensor(inputs.w).clone(), requires_grad=False)
                if inputs.b is not None:
                    self.m.bias = torch.nn.Parameter(to_tensor(inputs.b).clone(), requires_grad=False)
                return
            with torch.no_grad():
                self.m.weight.copy_(to_tensor(inputs.w))
                if inputs.b is not None:
                    self.m.bias.copy_(to_tensor(inputs.b))

        def forward(self, x: Any) -> Any:
            if case.channels_last:
                x = x.movedim(-1, c)
            y = self.conv(x)
            if case.channels_last:
                y = y.movedim(c, -1)
            return y

        def conv(self, x: Any) -> Any:
            """The pad, layer and crop on an NC* tensor."""
            if pre_pad:
                x = F.pad(x, [v for pair in reversed(pre_pad) for v in pair])
            y = self.m(x)
            if crop:
                y = y[(*(slice(None),) * (c + 1), *(slice(cb, y.shape[c + 1 + i] - ca) for i, (cb, ca) in enumerate(crop)))]
            return y

    class EpilogueModel(Model):
        def __init__(self) -> None:
            super().__init__()
            for name, value in torch_epilogue.buffers(case, inputs.epilogue).items():
                self.register_buffer(name, to_tensor(value).clone())
            self.residual_names = list(torch_epilogue.residuals(case, inputs.epilogue))
            # scalars as Python floats: literals in the traced code, as a user writes `y * 1.5`
            # (a NumPy array read inside forward would be traced as a graph input instead)
            self.scalars = tuple({k: float(v) for k, v in d.items() if np.ndim(v) == 0} for d in inputs.epilogue)

        def forward(self, x: Any, *residuals: Any) -> Any:
            if case.channels_last:
                x, residuals = x.movedim(-1, 1), tuple(r.movedim(-1, 1) for r in residuals)
            consts = {**dict(self.named_buffers()), **dict(zip(self.residual_names, residuals))}
            y, _ = torch_epilogue.apply(case, self.conv(x), consts, self.scalars)
            if case.channels_last:
                y = y.movedim(1, -1)
            return y

    return (EpilogueModel() if epilogue and case.epilogue else Model()).eval()


def epilogue_lines(case: Case, scalars: tuple[dict[str, np.ndarray], ...]) -> list[str]:
    """The epilogue's forward lines as `torch_epilogue.apply` writes them (pure)."""
    return torch_epilogue.lines(case, scalars)


def to_tensor(a: np.ndarray) -> Any:
    """numpy (bfloat16 included, via its bits) -> torch, without a copy."""
    import torch

    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def side_by_side(models: list[Any], arity: list[int]) -> Any:
    """One module holding `models` (a batched export or import): forward takes each model's `arity[i]`
    inputs in turn and returns one output per model; no op joins two models."""
    import torch

    class Batch(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.members = torch.nn.ModuleList(models)

        def forward(self, *args: Any) -> tuple:
            outs, at = [], 0
            for model, n in zip(self.members, arity):
                outs.append(model(*args[at:at + n]))
                at += n
            return tuple(outs)

    return Batch()
