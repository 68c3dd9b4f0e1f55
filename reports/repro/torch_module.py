"""The torch Model class of a reproducer whose framework starts from a torch module
(tvm-torch-import, torch-onnx-ort, torch-inductor): the same layer, pad, crop and layout moves as
backends/torch/module.py, written out as source; with an epilogue, its per-channel constants are
buffers, each residual a forward() input after x, and its lines (backends/torch/epilogue.py) follow
the conv on the NC* tensor, before the channels_last move back."""

from __future__ import annotations

import textwrap

from backends.torch import epilogue as torch_epilogue
from harness.model.case import Case
from reports.repro.epilogue import constants, residual_names, vector_names


def kwargs_source(kw: dict) -> str:
    """Keyword arguments as Python source."""
    return ", ".join(f"{k}={v!r}" for k, v in kw.items())


def model_class_source(case: Case, backend: str, cls: str, args: dict, pre_pad: list | None,
                       crop: list | None) -> str:
    """`class Model(torch.nn.Module)` holding the case's weights (and epilogue buffers); forward as the adapter's."""
    residuals, buffers = residual_names(case), vector_names(case)
    forward = ["x = x.movedim(-1, 1)"] if case.channels_last else []
    if case.channels_last and residuals:
        forward.append(", ".join(residuals) + " = " + ", ".join(f"{r}.movedim(-1, 1)" for r in residuals))
    if pre_pad:
        forward.append(f"x = F.pad(x, {[v for pair in reversed(pre_pad) for v in pair]})")
    forward.append("y = self.m(x)")
    if crop:  # as the adapter: end = size - after (not a negative index), so the exported graph is the same
        forward.append("y = y[:, :, " + ", ".join(f"{cb}:y.shape[{2 + i}] - {ca}" for i, (cb, ca) in enumerate(crop)) + "]")
    if buffers:
        forward.append(", ".join(buffers) + " = " + ", ".join(f"self.{n}" for n in buffers) + "  # the buffers")
    forward += torch_epilogue.lines(case, constants(case))
    if case.channels_last:
        forward.append("y = y.movedim(1, -1)")
    bias = "\n            self.m.bias.copy_(b)" if case.bias else ""
    register = ("\n        for name, value in buffers.items():  # the epilogue's per-channel constants"
                "\n            self.register_buffer(name, value.clone())") if buffers else ""
    return f'''class Model(torch.nn.Module):
    """convdiff's {backend} module: torch.nn.{cls} holding the case's weights{", then the epilogue" if case.epilogue else ""}."""

    def __init__(self, w, b{", buffers" if buffers else ""}):
        super().__init__()
        self.m = torch.nn.{cls}({kwargs_source(args)}, dtype=torch.{case.dtype})
        with torch.no_grad():
            self.m.weight.copy_(w){bias}{register}

    def forward(self, {", ".join(["x", *residuals])}):
{textwrap.indent(chr(10).join(forward), " " * 8)}
        return y
'''


def module_inputs(case: Case) -> tuple[str, str]:
    """(the Model's construction, the call's arguments) as code, with t() turning an array into a tensor."""
    buffers = vector_names(case)
    made = "Model(t(w), None if b is None else t(b)" + (
        ", {" + ", ".join(f"{n!r}: t(NAMED[{n!r}])" for n in buffers) + "}" if buffers else "") + ")"
    return made, ", ".join(["t(x)", *(f"t(NAMED[{n!r}])" for n in residual_names(case))])
