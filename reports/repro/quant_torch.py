"""Quantized reproducer parts for torch: torch.ao quantized modules under each engine, and PT2E.

Each template returns the source of `run_framework(x, w, b) -> (y, dtype name, rounding)` (see
reports/repro/quant.py for the script around it). The module arguments, input pad and output crop
come from the adapters' own pure plans (TorchAoBackend.plan, TorchBackend.translate); when the
record has a translation, it must hold the lines the adapter records for them (torch.ao: exactly its
lines; PT2E: exactly pt2e_quantizer.translation's), else the adapter changed since the record was made: ReproUnavailable.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from backends.torch.ao import TORCH_QDTYPE, TorchAoBackend
from backends.torch.eager import TorchBackend
from backends.torch.pt2e_quantizer import translation as pt2e_translation
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.pinned_observer import PINNED_OBSERVER
from reports.repro.registry import require_lines
from reports.repro.torch_module import kwargs_source

ENGINES = {"torch-ao-x86": "x86", "torch-ao-fbgemm": "fbgemm", "torch-ao-onednn": "onednn", "torch-ao-qnnpack": "qnnpack"}


def _crop_source(crop: list | None) -> str:
    if not crop:
        return ""
    idx = ", ".join(f"{cb}:y.shape[{2 + i}] - {ca}" for i, (cb, ca) in enumerate(crop))
    return f"\n        y = y[:, :, {idx}]  # the rest of an asymmetric transposed padding"


def _per_channel(case: Case) -> bool:
    """One weight scale per output channel (asked for, or pinned as a list)."""
    q = case.quant
    return q is not None and (q.per_channel or isinstance(q.w_scale, tuple))


def _ao_lines(case: Case, engine: str, cls: str, args: dict, pre_pad: list | None, crop: list | None) -> list[str]:
    """The lines TorchAoBackend.run records for this case (its notes aside)."""
    lines = [f"torch.backends.quantized.engine = {engine!r}"]
    if pre_pad:
        lines.append(f"x_int = np.pad(x_int, [(0, 0), (0, 0), *{pre_pad}], constant_values=x_zero_point)")
    lines.append(f"w_q = torch._make_per_channel_quantized_tensor(w_int8, w_scales, w_zero_points, axis={int(case.transpose)})"
                 if _per_channel(case) else "w_q = torch._make_per_tensor_quantized_tensor(w_int8, w_scale, w_zero_point)")
    if case.bias:
        lines.append("b = torch.tensor(float32(bias_int32 * x_scale * w_scale))  # torch requantizes it")
    lines += [f"m = torch.ao.nn.quantized.{cls}(" + kwargs_source(args) + ")", "m.set_weight_bias(w_q, b)",
              "m.scale, m.zero_point = y_scale, y_zero_point",
              f"x_q = torch._make_per_tensor_quantized_tensor(x_int, x_scale, x_zero_point)  # {TORCH_QDTYPE[case.dtype]}"]
    if case.channels_last:
        lines.append("x_q = x_q.movedim(-1, 1)  # channels_last memory format")
    lines.append("y = m(x_q)")
    if crop:
        lines.append("y = y[:, :, " + ", ".join(f"{cb}:{-ca or None}" for cb, ca in crop) + "]")
    if case.channels_last:
        lines.append("y = y.movedim(1, -1)")
    return [*lines, "y_int = y.int_repr()"]


def torch_ao_template(rec: Record, case: Case) -> str:
    """torch.ao.nn.quantized.Conv*/ConvTranspose* under the engine, tensors from the exact integers."""
    engine = ENGINES[rec.backend]
    kw, pre_pad, crop, _ = TorchAoBackend().plan(case)
    kind = "ConvTranspose" if case.transpose else "Conv"
    cls = f"{kind}{case.rank}d"
    args = {"in_channels": case.in_channels, "out_channels": case.out_channels, "kernel_size": case.kernel_size,
            "bias": case.bias, **kw}
    require_lines(rec, _ao_lines(case, engine, cls, args, pre_pad, crop))
    pad = (f"\n    x = np.pad(x, [(0, 0), (0, 0), *{pre_pad}], constant_values=x_zp)  # the zero point: real 0"
           if pre_pad else "")
    axis = 1 if case.transpose else 0
    scales = ("w_scale[: C_OUT // GROUPS]  # axis 1 of (C_in, C_out/g, *k): the groups share these"
              if case.transpose else "w_scale")
    x_q = ("torch._make_per_tensor_quantized_tensor(\n"
           "            torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, 1, -1))), x_scale, x_zp).movedim(-1, 1)"
           "  # channels_last memory format" if case.channels_last else
           "torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), x_scale, x_zp)")
    back = "\n    y_int = y_int.movedim(1, -1)" if case.channels_last else ""
    return f'''
import torch
import torch.ao.nn.quantized as nnq


def run_framework(x, w, b):
    """What convdiff's {rec.backend} adapter does: torch.ao.nn.quantized.{cls} under the {engine!r} engine."""
    torch.backends.quantized.engine = {engine!r}
    x = np.moveaxis(x, -1, 1) if LAYOUT == "channels_last" else x  # the integers, channels first{pad}
    x = np.ascontiguousarray(x)
    scales = {scales}
    with torch.no_grad():
        x_q = {x_q}
        if PER_CHANNEL:
            w_q = torch._make_per_channel_quantized_tensor(
                torch.from_numpy(w), torch.tensor(scales, dtype=torch.float64),
                torch.full((len(scales),), w_zp, dtype=torch.int64), {axis})
        else:
            w_q = torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), float(w_scale[0]), w_zp)
        # torch takes a float bias and quantizes it with x_scale * w_scale[c] itself
        bias = None if b is None else torch.from_numpy((b.astype(np.float64) * x_scale * w_scale).astype(np.float32))
        m = nnq.{cls}({kwargs_source(args)})
        m.set_weight_bias(w_q, bias)
        m.scale, m.zero_point = float(y_scale), int(y_zp)
        y = m(x_q){_crop_source(crop)}
    y_int = y.int_repr(){back}
    y = y_int.contiguous().numpy()
    return y, str(y.dtype), "half_to_even"
'''


PT2E_CLASSES = PINNED_OBSERVER + '''

class OutputQuantizer(X86InductorQuantizer):
    """The x86 recipe, then y's spec on the output of each pattern it quantized (it leaves a lone conv's
    output float: in a model, the next int8 op's input observer quantizes it)."""

    def annotate(self, model):
        model = super().annotate(model)
        spec = self.get_global_quantization_config().output_activation
        for node in model.graph.nodes:
            ann = node.meta.get("quantization_annotation")
            if ann is not None and getattr(ann, "_is_output_of_quantized_pattern", False):
                ann.output_qspec = spec
        return model


def quantization_config():
    """x and y fixed at the case's parameters, w per channel (axis 0) at the case's scales."""
    def act(scale, zero_point):
        return FixedQParamsQuantizationSpec(dtype=torch.uint8, scale=float(scale), zero_point=int(zero_point),
                                            quant_min=0, quant_max=255, qscheme=torch.per_tensor_affine)

    weight = QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127, qscheme=torch.per_channel_symmetric,
                              ch_axis=0, is_dynamic=False, observer_or_fake_quant_ctr=PinnedObserver.with_args(
                                  scales=[float(s) for s in w_scale], zero_points=[0] * C_OUT))
    return QuantizationConfig(act(x_scale, x_zp), act(y_scale, y_zp), weight, None, False)


def return_quantized(gm):
    """convert_pt2e ends with quantize -> dequantize: return the quantize op's uint8 y instead."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    ret = out.args[0]
    dq = ret[0] if isinstance(ret, (tuple, list)) and len(ret) == 1 else ret
    assert "dequantize_per_tensor" in str(dq.target), f"the graph returns {dq.target}"
    out.args = ((dq.args[0],),)
    gm.graph.eliminate_dead_code()
    gm.recompile()
'''


def pt2e_template(rec: Record, case: Case) -> str:
    """float nn.Conv2d -> torch.export -> X86InductorQuantizer (pinned) -> convert_pt2e -> torch.compile."""
    kw, pre_pad, _, _ = TorchBackend().translate(case)
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    stand_in: Any = SimpleNamespace(per_channel=_per_channel(case))  # translation() reads only this
    require_lines(rec, pt2e_translation(case, kw, pre_pad, stand_in))
    pads = [v for pair in reversed(pre_pad) for v in pair] if pre_pad else None
    forward = [f"x = torch.nn.functional.pad(x, {pads})  # 0.0: x's zero point once quantized"] if pads else []
    forward.append("return self.conv(x)")
    x_in = ("torch.from_numpy(np.ascontiguousarray(np.moveaxis(x_real, 1, -1))).movedim(-1, 1)  # channels_last format"
            if case.channels_last else "torch.from_numpy(np.ascontiguousarray(x_real))")
    back = "\n    y = y.movedim(1, -1)" if case.channels_last else ""
    bias = ("\n            self.conv.bias.copy_(torch.from_numpy((b.astype(np.float64) * x_scale * w_scale)"
            ".astype(np.float32)))") if case.bias else ""
    return f'''
import torch
import torch._dynamo
import torch._inductor.config
from torchao.quantization.pt2e.observer import ObserverBase
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.quantization.pt2e.quantizer import FixedQParamsQuantizationSpec, QuantizationConfig, QuantizationSpec
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer

{PT2E_CLASSES}

class Model(torch.nn.Module):
    """The float conv a user starts from: the case's dequantized weights and bias."""

    def __init__(self, w, b):
        super().__init__()
        self.conv = torch.nn.Conv2d(C_IN, C_OUT, {case.kernel_size}, bias={case.bias}, {args})
        with torch.no_grad():
            w_real = ((w.astype(np.float64) - w_zp) * w_scale.reshape(-1, 1, 1, 1)).astype(np.float32)
            self.conv.weight.copy_(torch.from_numpy(w_real)){bias}

    def forward(self, x):
{textwrap.indent(chr(10).join(forward), " " * 8)}


def run_framework(x, w, b):
    """What convdiff's torch-pt2e adapter does: PT2E with the case's parameters, compiled by inductor (freezing)."""
    x_nc = np.moveaxis(x, -1, 1) if LAYOUT == "channels_last" else x
    x_real = ((x_nc.astype(np.float64) - x_zp) * x_scale).astype(np.float32)  # quantizes back to x exactly
    x_t = {x_in}
    torch._dynamo.reset()
    exported = torch.export.export(Model(w, b).eval(), (x_t,)).module()
    prepared = prepare_pt2e(exported, OutputQuantizer().set_global(quantization_config()))
    prepared(x_t)
    gm = convert_pt2e(prepared)
    return_quantized(gm)
    torch._dynamo.utils.counters["inductor"].clear()
    compiled = torch.compile(gm, backend="inductor", fullgraph=True)
    with torch.no_grad(), torch._inductor.config.patch(freezing=True):
        y = compiled(x_t)
    inductor = torch._dynamo.utils.counters["inductor"]
    print("inductor lowered the int8 conv (onednn.qconv_pointwise):",
          {{k: int(inductor[k]) for k in ("qconv_weight_prepack_matcher_count", "qconv_unary_lower_count")}}){back}
    y = y.contiguous().numpy()
    return y, str(y.dtype), "half_to_even"
'''


TORCH_TEMPLATES: dict[str, Callable[[Record, Case], str]] = {
    **dict.fromkeys(ENGINES, torch_ao_template), "torch-pt2e": pt2e_template}
