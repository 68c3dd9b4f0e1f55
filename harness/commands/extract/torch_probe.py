"""Torch side of `convdiff extract` (run as `python -m harness.commands.extract.torch_probe`, in its own process).

One forward pass under a TorchFunctionMode sees every convolution the model runs: the
nn.Conv*/nn.ConvTranspose* modules (whose forward calls the functional op) and functional
calls alike, with the actual input tensor and the actual output. Module pre/post hooks keep a
stack of qualified module names, so each convolution is named by the module that ran it.
"""

from __future__ import annotations

import sys
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from harness.commands.extract.layer import LayerConv, per_dim, symmetric
from harness.commands.extract.probe_io import ProbeError, main, resolve_spec

CONV_FUNCS: dict[Any, str] = {
    torch.conv1d: "conv1d", torch.conv2d: "conv2d", torch.conv3d: "conv3d",
    torch.conv_transpose1d: "conv_transpose1d", torch.conv_transpose2d: "conv_transpose2d",
    torch.conv_transpose3d: "conv_transpose3d",
    torch.nn.functional.conv1d: "conv1d", torch.nn.functional.conv2d: "conv2d", torch.nn.functional.conv3d: "conv3d",
    torch.nn.functional.conv_transpose1d: "conv_transpose1d",
    torch.nn.functional.conv_transpose2d: "conv_transpose2d",
    torch.nn.functional.conv_transpose3d: "conv_transpose3d",
}


def _conv_args(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return dict(input=input, weight=weight, bias=bias, stride=stride, padding=padding, output_padding=0,
                dilation=dilation, groups=groups)


def _transpose_args(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return dict(input=input, weight=weight, bias=bias, stride=stride, padding=padding, output_padding=output_padding,
                dilation=dilation, groups=groups)


def describe(op: str, a: dict[str, Any], out: torch.Tensor, name: str) -> LayerConv:
    rank = int(op[-2])
    x, w = a["input"], a["weight"]
    batched = x.dim() == rank + 2
    groups = int(a["groups"])
    transpose = op.startswith("conv_transpose")
    padding = a["padding"]
    pad = padding if isinstance(padding, str) else symmetric(per_dim(padding, rank))
    layout = "channels_first"
    if batched and rank in (2, 3) and not x.is_contiguous():
        fmt = torch.channels_last if rank == 2 else torch.channels_last_3d
        layout = "channels_last" if x.is_contiguous(memory_format=fmt) else layout
    return LayerConv(
        name=name, op=op, batch=int(x.shape[0]) if batched else 1,
        in_channels=int(x.shape[-rank - 1]),
        out_channels=int(w.shape[1]) * groups if transpose else int(w.shape[0]),
        input_size=tuple(int(n) for n in x.shape[-rank:]), kernel_size=tuple(int(k) for k in w.shape[2:]),
        stride=per_dim(a["stride"], rank), padding=pad,
        output_padding=per_dim(a["output_padding"], rank), dilation=per_dim(a["dilation"], rank),
        groups=groups, bias=a["bias"] is not None, layout=layout, dtype=str(x.dtype).removeprefix("torch."),
        out_size=tuple(int(n) for n in out.shape[-rank:]),
    )


class ConvRecorder(TorchFunctionMode):
    """Records every convolution call with the name of the module running it."""

    def __init__(self, stack: list[str]) -> None:
        super().__init__()
        self.stack, self.layers = stack, []
        self.calls: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        op = CONV_FUNCS.get(func)
        if op is not None:
            bind = _transpose_args if op.startswith("conv_transpose") else _conv_args
            owner = self.stack[-1] if self.stack else ""
            n = self.calls[owner] = self.calls.get(owner, 0) + 1
            name = (owner or "<model>") + (f"#{n}" if n > 1 else "")
            self.layers.append(describe(op, bind(*args, **kwargs), out, name))
        return out


def load_module(spec: str) -> torch.nn.Module:
    """`package.module:callable` (or an attribute path) -> the nn.Module it returns or is."""
    return resolve_spec(spec, torch.nn.Module, "torch.nn.Module")


def probe(model: str, input_shape: list[int] | None, **_: Any) -> list[LayerConv]:
    if not input_shape:
        raise ProbeError("a torch module needs --input-shape (N,C,... as the model takes it)")
    module = load_module(model).eval()
    floats = [p.dtype for p in module.parameters() if p.is_floating_point()]
    x = torch.randn(*input_shape, generator=torch.Generator().manual_seed(0)).to(floats[0] if floats else torch.float32)
    stack: list[str] = []
    handles = []

    def enter(name: str) -> Any:
        return lambda _module, _args: stack.append(name)  # None: the input is left alone

    def leave(_module: Any, _args: Any, _out: Any) -> None:
        stack.pop()  # a hook returning a value would replace the module's output

    for qual, sub in module.named_modules():
        handles.append(sub.register_forward_pre_hook(enter(qual)))
        handles.append(sub.register_forward_hook(leave))
    recorder = ConvRecorder(stack)
    try:
        with torch.no_grad(), recorder:
            module(x)
    except Exception as exc:  # noqa: BLE001  (the user's model may raise anything: say so in one line)
        raise ProbeError(f"the model's forward pass failed on input {tuple(input_shape)}: "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    finally:
        for h in handles:
            h.remove()
    return recorder.layers


if __name__ == "__main__":
    sys.exit(main(probe))
