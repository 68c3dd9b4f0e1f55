"""Quantized (uint8/int8) cases on `executorch`: PT2E quantization with ExecuTorch's XNNPACKQuantizer, lowered to
XNNPACK, the flow ExecuTorch's XNNPACK documentation shows for int8.

The model is the float module of backends/torch/module.py (its identities for padding and layout) holding the
case's dequantized weights, float32(w_int * w_scale[c]), and bias, float32(bias_int * x_scale * w_scale[c])
(float64 products rounded once). It is captured with `torch.export.export(...).module()`, annotated by
`XNNPACKQuantizer` (executorch.backends.xnnpack.quantizer.xnnpack_quantizer) with a `QuantizationConfig` that
carries the case's parameters instead of observed ones, then `prepare_pt2e`, one calibration call and
`convert_pt2e` (torchao.quantization.pt2e.quantize_pt2e); the converted module is exported again and lowered with
the XNNPACK partitioner (program.py).

The scheme XNNPACKQuantizer expresses (its `get_symmetric_quantization_config`): int8 activations, per-tensor
affine; int8 weights symmetric in [-127, 127], per output channel or per tensor; bias left float (XNNPACK's
lowering quantizes it to int32 at x_scale * w_scale[c]). The case's parameters are pinned into that scheme:
- x and y: torchao's `FixedQParamsQuantizationSpec` (int8, the case's scale and zero point).
- w: backends/torch/pt2e_quantizer.py's `PinnedObserver` (calculate_qparams() returns the case's scales), per
  channel (axis 0; axis 1 for a transposed conv, which the quantizer itself sets) or per tensor.
- uint8 cases run as int8 with every zero point less 128 (x_int - 128, y_int - 128): the real values, the
  rounding and the saturation are the same, so it is an exact identity (noted in the record).
x is fed as float32((x_int - x_zp) * x_scale), which the program's first quantize op maps back to x_int; y comes
back dequantized, float32((y_int - y_zp) * y_scale), and y_int = rint(y / y_scale) + y_zp recovers it exactly
(|y_int - y_zp| <= 255: one float32 rounding moves the quotient by less than 2^-15).

What it cannot express (kept in `reason`): a weight zero point (symmetric weights only); a weight of -128 (the
weight range is [-127, 127]); a transposed conv with groups > 1 (the quantizer skips it: `_do_annotate_conv`,
"skip if transposed conv has more than 1 group", so it stays float); conv3d and conv_transpose3d (its conv
patterns list aten.conv1d/conv2d/convolution and conv_transpose1d/2d/3d, and ExecuTorch's CPU kernels run no
5-D convolution either, backend.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.quant import QParams

SHIFT = {"uint8": 128, "int8": 0}  # subtracted from every activation zero point (uint8 as int8)
WZP_REASON = ("ExecuTorch's XNNPACKQuantizer quantizes weights symmetrically (per_channel_symmetric or "
              "per_tensor_symmetric): no weight zero point")
GROUPED_T_REASON = ("ExecuTorch's XNNPACKQuantizer skips a transposed conv with groups > 1 (xnnpack_quantizer_utils."
                    "_do_annotate_conv: 'skip if transposed conv has more than 1 group'): it would stay a float conv")
W128_REASON = "ExecuTorch's XNNPACKQuantizer quantizes weights to [-127, 127]: this case's w holds -128"


def reason(case: Case) -> str | None:
    """Why XNNPACKQuantizer's scheme cannot express this case (None when it can); needs only the case."""
    if case.quant is not None and case.quant.w_zero_point:
        return WZP_REASON
    if case.transpose and case.groups > 1:
        return GROUPED_T_REASON
    return None


def float_inputs(case: Case, inputs: Inputs) -> tuple[Case, Inputs]:
    """(the float32 twin of the case, its inputs: x as float32 reals, the dequantized w and b)."""
    import dataclasses

    p = inputs.quant
    assert p is not None
    axis = 1 if case.transpose else 0  # output channels: (C_in, C_out/g, *k) for a transposed conv (groups 1)
    shape = [1] * inputs.w.ndim
    shape[axis] = -1
    w = (inputs.w.astype(np.float64) * p.w_scale.reshape(shape)).astype(np.float32)
    b = None if inputs.b is None else (inputs.b.astype(np.float64) * p.x_scale * p.w_scale).astype(np.float32)
    x = ((inputs.x.astype(np.float64) - p.x_zero_point) * p.x_scale).astype(np.float32)
    twin = dataclasses.replace(case, dtype="float32", quant=None)
    return twin, dataclasses.replace(inputs, x=x, w=w, b=b, quant=None)


def config(torch: Any, case: Case, p: QParams) -> Any:
    """XNNPACKQuantizer's QuantizationConfig with the case's parameters pinned (module doc)."""
    from torchao.quantization.pt2e.quantizer import FixedQParamsQuantizationSpec, QuantizationConfig, QuantizationSpec

    pinned = _observer(p.per_channel)
    shift = SHIFT[case.dtype]

    def act(scale: float, zero_point: int) -> Any:
        return FixedQParamsQuantizationSpec(dtype=torch.int8, scale=float(scale), zero_point=int(zero_point) - shift,
                                            quant_min=-128, quant_max=127, qscheme=torch.per_tensor_affine)

    c = case.out_channels
    if p.per_channel:
        scheme, scales, axis = torch.per_channel_symmetric, [float(s) for s in np.broadcast_to(p.w_scale, (c,))], 0
    else:
        scheme, scales, axis = torch.per_tensor_symmetric, [float(p.w_scale.ravel()[0])], 0
    # the axis, scheme and range come from the spec (the quantizer sets axis 1 on a transposed conv's weight spec)
    observer = pinned.with_args(scales=scales, zero_points=[0] * len(scales))
    weight = QuantizationSpec(dtype=torch.int8, quant_min=-127, quant_max=127, qscheme=scheme, ch_axis=axis,
                              is_dynamic=False, observer_or_fake_quant_ctr=observer)
    return QuantizationConfig(act(p.x_scale, p.x_zero_point), act(p.y_scale, p.y_zero_point), weight, None, False)


def _observer(per_channel: bool) -> type:
    """backends/torch/pt2e_quantizer.py's PinnedObserver; per channel, a subclass whose name holds "PerChannel":
    torchao's prepare (prepare.py _create_obs_or_fq_from_qspec) passes the spec's ch_axis only to observer
    classes so named, and the quantizer moves a transposed conv's weight axis to 1 through the spec."""
    from backends.torch.pt2e_quantizer import _classes

    pinned, _ = _classes()
    if not per_channel:
        return pinned
    return type("PinnedPerChannelObserver", (pinned,), {})


def quantized_module(case: Case, inputs: Inputs) -> tuple[Any, tuple, list[str], list[str]]:
    """(the converted PT2E module, its example input, the flow as code lines, notes); Unsupported where the
    scheme cannot express the case or the converted graph is not an int8 conv."""
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from backends.executorch.program import float_module, quiet

    why = reason(case)
    if why:
        raise Unsupported(why)
    if int(inputs.w.min(initial=0)) < -127:
        raise Unsupported(W128_REASON)
    p = inputs.quant
    assert p is not None
    twin, finputs = float_inputs(case, inputs)
    model, example, lines, notes = float_module(twin, finputs)
    with quiet():
        captured = torch.export.export(model, example).module()
        prepared = prepare_pt2e(captured, XNNPACKQuantizer().set_global(config(torch, case, p)))
        prepared(*example)
        converted = convert_pt2e(prepared)
    problem = check(converted, inputs.w)
    if problem:
        raise Unsupported(f"the converted graph is not an int8 conv: {problem}")
    return converted, example, [*lines, *flow_lines(case, p)], [*notes, *quant_notes(case)]


def quant_notes(case: Case) -> list[str]:
    """The exact identities the quantized flow uses for this case."""
    notes = ["y read back from the dequantized float32 output: y_int = rint(y / y_scale) + y_zp (exact)"]
    if case.dtype == "uint8":
        notes.append("uint8 as int8 with every zero point less 128 (x_int - 128, y_int - 128): an exact identity")
    return notes


def _is(node: Any, name: str) -> bool:
    return getattr(node, "op", "") == "call_function" and str(node.target).split(".")[-2:-1] == [name]


def check(gm: Any, w_int: np.ndarray) -> str | None:
    """None when the converted graph holds one conv between dequantize ops, its weight the case's int8 w, and
    its one user a quantize op; else what is missing."""
    import functools

    convs = [n for n in gm.graph.nodes if n.op == "call_function" and "conv" in str(n.target)]
    if len(convs) != 1:
        return f"{len(convs)} conv nodes"
    conv = convs[0]
    xin, win = conv.args[0], conv.args[1]
    if not _is(xin, "dequantize_per_tensor"):
        return f"the conv's input is {getattr(xin, 'target', xin)}, not dequantize_per_tensor"
    if not (_is(win, "dequantize_per_channel") or _is(win, "dequantize_per_tensor")) or win.args[0].op != "get_attr":
        return f"the conv's weight is {getattr(win, 'target', win)}, not a dequantized constant"
    qw = functools.reduce(getattr, str(win.args[0].target).split("."), gm)
    if str(qw.dtype) != "torch.int8" or not np.array_equal(qw.numpy(), w_int):
        return "the folded int8 weight differs from the case's w"
    users = list(conv.users)
    if len(users) != 1 or not _is(users[0], "quantize_per_tensor"):
        return f"the conv's output goes to {[str(u.target) for u in users]}, not quantize_per_tensor"
    return None


def to_integers(case: Case, y: np.ndarray, p: QParams) -> np.ndarray:
    """The case's y integers from the dequantized float32 output (exact: module doc)."""
    from harness.numerics.quant import LIMITS, STORAGE

    q = np.rint(y.astype(np.float64) / p.y_scale) + p.y_zero_point
    lo, hi = LIMITS[case.dtype]
    return np.clip(q, lo, hi).astype(STORAGE[case.dtype])


def flow_lines(case: Case, p: QParams) -> list[str]:
    """The quantization flow as a user writes it."""
    shift = SHIFT[case.dtype]
    scheme = "per_channel_symmetric" if p.per_channel else "per_tensor_symmetric"
    return ["weight = float32(w_int * w_scale[c]); bias = float32(bias_int * x_scale * w_scale[c])",
            f"spec(s, z) = FixedQParamsQuantizationSpec(torch.int8, s, z{f' - {shift}' if shift else ''}, -128, 127, "
            "per_tensor_affine)",
            f"w_spec = QuantizationSpec(torch.int8, -127, 127, {scheme}, observer=PinnedObserver(w_scales))",
            "quantizer = XNNPACKQuantizer().set_global(QuantizationConfig(spec(x_scale, x_zp), spec(y_scale, y_zp), "
            "w_spec, None))",
            "gm = convert_pt2e(prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer))  # after gm(x)",
            "x = float32((x_int - x_zp) * x_scale); model = gm"]
