"""The PT2E pieces of backends/torch/pt2e.py: the float model, the quantizer with the case's pinned
quantization parameters, the converted-graph check, and the translation lines.

Framework imports (torch, torchao) happen inside the functions: only a worker that runs torch-pt2e
loads them. See backends/torch/pt2e.py for why each piece is as it is.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from backends.base import Rejected, first_line
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.quant import QParams

Q_OPS = ("quantize_per_tensor", "dequantize_per_tensor", "dequantize_per_channel")


@functools.cache
def _classes() -> tuple[type, type]:
    """(PinnedObserver, OutputQuantizer), built once torchao is importable."""
    import torch
    from torchao.quantization.pt2e.observer import ObserverBase
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer

    class PinnedObserver(ObserverBase):  # type: ignore[misc]
        """An observer that observes nothing: calculate_qparams() returns the scales and zero points given."""

        def __init__(self, scales: list[float], zero_points: list[int], dtype: Any = torch.int8,
                     qscheme: Any = torch.per_channel_symmetric, ch_axis: int = 0, quant_min: int = -128,
                     quant_max: int = 127, is_dynamic: bool = False, **_: Any) -> None:
            super().__init__(dtype=dtype, is_dynamic=False)
            self.qscheme, self.ch_axis, self.quant_min, self.quant_max = qscheme, ch_axis, quant_min, quant_max
            self.register_buffer("scale", torch.tensor(scales, dtype=torch.float32))
            self.register_buffer("zero_point", torch.tensor(zero_points, dtype=torch.int32))

        def forward(self, x: Any) -> Any:
            return x

        def calculate_qparams(self) -> tuple[Any, Any]:
            return self.scale, self.zero_point

    class OutputQuantizer(X86InductorQuantizer):  # type: ignore[misc]
        """X86InductorQuantizer, then y's spec on the output of each pattern it quantized (a lone
        conv's output is left float by the recipe; in a model the next int8 op quantizes it)."""

        def annotate(self, model: Any) -> Any:
            model = super().annotate(model)
            spec = self.get_global_quantization_config().output_activation
            for node in model.graph.nodes:
                ann = node.meta.get("quantization_annotation")
                if ann is not None and getattr(ann, "_is_output_of_quantized_pattern", False):
                    ann.output_qspec = spec
            return model

    return PinnedObserver, OutputQuantizer


def float_conv(torch: Any, case: Case, inputs: Inputs, kw: dict[str, Any], pre_pad: list | None) -> Any:
    """A float32 nn.Conv2d holding the case's dequantized w and b, F.pad of x first where pads are asymmetric."""
    p = inputs.quant
    assert p is not None
    ch = p.w_scale.reshape(-1, *(1,) * (inputs.w.ndim - 1))
    w = ((inputs.w.astype(np.float64) - p.w_zero_point) * ch).astype(np.float32)
    b = None if inputs.b is None else (inputs.b.astype(np.float64) * p.x_scale * p.w_scale).astype(np.float32)
    pads = None if not pre_pad else [v for pair in reversed(pre_pad) for v in pair]

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(case.in_channels, case.out_channels, case.kernel_size, bias=b is not None, **kw)
            with torch.no_grad():
                self.conv.weight.copy_(torch.from_numpy(w))
                if b is not None:
                    self.conv.bias.copy_(torch.from_numpy(b))

        def forward(self, x: Any) -> Any:
            if pads:
                x = torch.nn.functional.pad(x, pads)
            return self.conv(x)

    try:
        return Model().eval()
    except (ValueError, RuntimeError) as exc:  # nn.Conv2d's own check refuses an invalid case (groups not dividing)
        raise Rejected(first_line(exc)) from None


def config(torch: Any, p: QParams, out_channels: int) -> Any:
    """The QuantizationConfig with the case's parameters: x and y fixed, w per channel pinned."""
    from torchao.quantization.pt2e.quantizer import FixedQParamsQuantizationSpec, QuantizationConfig, QuantizationSpec

    pinned, _ = _classes()

    def act(scale: float, zero_point: int) -> Any:
        return FixedQParamsQuantizationSpec(dtype=torch.uint8, scale=float(scale), zero_point=int(zero_point),
                                            quant_min=0, quant_max=255, qscheme=torch.per_tensor_affine)

    scales = [float(s) for s in np.broadcast_to(p.w_scale, (out_channels,))]
    weight = QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127, qscheme=torch.per_channel_symmetric,
                              ch_axis=0, is_dynamic=False,
                              observer_or_fake_quant_ctr=pinned.with_args(scales=scales, zero_points=[0] * out_channels))
    return QuantizationConfig(act(p.x_scale, p.x_zero_point), act(p.y_scale, p.y_zero_point), weight, None, False)


def quantize(torch: Any, model: Any, x: Any, p: QParams, out_channels: int) -> Any:
    """export -> prepare_pt2e (OutputQuantizer with the pinned config) -> one calibration call -> convert_pt2e."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    _, quantizer_cls = _classes()
    exported = torch.export.export(model, (x,)).module()
    prepared = prepare_pt2e(exported, quantizer_cls().set_global(config(torch, p, out_channels)))
    prepared(x)
    return convert_pt2e(prepared)


def _is(node: Any, name: str) -> bool:
    return getattr(node, "op", "") == "call_function" and str(node.target).split(".")[-2:-1] == [name]


def check_graph(torch: Any, gm: Any, w_int: np.ndarray) -> str | None:
    """None when gm is q(x) -> dq -> conv2d(dq_per_channel(int8 w)) -> q -> dq -> output; then the final
    dequantize is removed (gm returns the quantize op's integers). Else what is missing."""
    convs = [n for n in gm.graph.nodes if n.op == "call_function" and str(n.target).startswith("aten.conv")]
    if len(convs) != 1:
        return f"{len(convs)} conv nodes"
    conv = convs[0]
    xin, win = conv.args[0], conv.args[1]
    if not (_is(xin, "dequantize_per_tensor") and _is(xin.args[0], "quantize_per_tensor")):
        return f"the conv's input is {getattr(xin, 'target', xin)}, not a dequantized quantize_per_tensor"
    if not (_is(win, "dequantize_per_channel") and win.args[0].op == "get_attr"):
        return f"the conv's weight is {getattr(win, 'target', win)}, not dequantize_per_channel of a constant"
    qw = functools.reduce(getattr, str(win.args[0].target).split("."), gm)
    if qw.dtype != torch.int8 or not np.array_equal(qw.numpy(), w_int):
        return "the folded int8 weight differs from the case's w"
    users = list(conv.users)
    if len(users) != 1 or not _is(users[0], "quantize_per_tensor"):
        return f"the conv's output goes to {[str(u.target) for u in users]}, not quantize_per_tensor"
    q = users[0]
    out = next(n for n in gm.graph.nodes if n.op == "output")
    ret = out.args[0]
    dq = ret[0] if isinstance(ret, (tuple, list)) and len(ret) == 1 else ret
    if not (_is(dq, "dequantize_per_tensor") and dq.args[0] is q):
        return f"the graph returns {getattr(dq, 'target', dq)}, not the dequantized output quantize"
    out.args = ((q,),)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return None


def translation(case: Case, kw: dict[str, Any], pre_pad: list | None, p: QParams) -> list[str]:
    """The flow as a user writes it."""
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    return [f"m = nn.Conv2d({case.in_channels}, {case.out_channels}, {case.kernel_size}, {args})"
            "  # weight = float32(w_int * w_scale[c]), bias = float32(bias_int * x_scale * w_scale[c])",
            *(["forward: x = F.pad(x, pads); y = m(x)"] if pre_pad else []),
            "spec(s, z) = FixedQParamsQuantizationSpec(torch.uint8, s, z, 0, 255, torch.per_tensor_affine)",
            "w_spec = QuantizationSpec(torch.int8, -128, 127, per_channel_symmetric, ch_axis=0, "
            f"observer=PinnedObserver(w_scales{'' if p.per_channel else ' (one scale, repeated)'}))",
            "quantizer = X86InductorQuantizer + output_qspec on the conv; "
            "quantizer.set_global(QuantizationConfig(spec(x_scale, x_zp), spec(y_scale, y_zp), w_spec, None))",
            "gm = convert_pt2e(prepare_pt2e(torch.export.export(m, (x,)).module(), quantizer))  # after gm(x)",
            "gm: drop the final dequantize_per_tensor (return the quantize op's uint8 y)",
            "torch._inductor.config.freezing = True",
            'with torch.no_grad(): y = torch.compile(gm, backend="inductor", fullgraph=True)(float32((x_int - x_zp) * x_scale))']
