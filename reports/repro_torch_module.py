"""The torch Model class of a reproducer whose framework starts from a torch module
(tvm-torch-import, torch-onnx-ort): the same layer, pad, crop and layout moves as
backends/torch_module.py, written out as source."""

from __future__ import annotations

import textwrap

from harness.model.case import Case


def kwargs_source(kw: dict) -> str:
    """Keyword arguments as Python source."""
    return ", ".join(f"{k}={v!r}" for k, v in kw.items())


def model_class_source(case: Case, backend: str, cls: str, args: dict, pre_pad: list | None,
                       crop: list | None) -> str:
    """`class Model(torch.nn.Module)` holding the case's weights; forward as the adapter's."""
    forward = ["x = x.movedim(-1, 1)"] if case.channels_last else []
    if pre_pad:
        forward.append(f"x = F.pad(x, {[v for pair in reversed(pre_pad) for v in pair]})")
    forward.append("y = self.m(x)")
    if crop:  # as the adapter: end = size - after (not a negative index), so the exported graph is the same
        forward.append("y = y[:, :, " + ", ".join(f"{cb}:y.shape[{2 + i}] - {ca}" for i, (cb, ca) in enumerate(crop)) + "]")
    if case.channels_last:
        forward.append("y = y.movedim(1, -1)")
    bias = "\n            self.m.bias.copy_(b)" if case.bias else ""
    return f'''class Model(torch.nn.Module):
    """convdiff's {backend} module: torch.nn.{cls} holding the case's weights."""

    def __init__(self, w, b):
        super().__init__()
        self.m = torch.nn.{cls}({kwargs_source(args)}, dtype=torch.{case.dtype})
        with torch.no_grad():
            self.m.weight.copy_(w){bias}

    def forward(self, x):
{textwrap.indent(chr(10).join(forward), " " * 8)}
        return y
'''
