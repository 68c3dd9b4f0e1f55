"""torch.ao quantized convolution under each quantized engine (issue 25).

torch-ao-{x86,fbgemm,onednn,qnnpack}: `torch.backends.quantized.engine = ENGINE`, then
`torch.ao.nn.quantized.Conv{1,2,3}d` / `ConvTranspose{1,2,3}d` with `set_weight_bias(w_q, b)`,
`.scale = y_scale`, `.zero_point = y_zp`, called on a quantized x. Every quantized tensor is
made from the case's exact integers (`torch._make_per_tensor_quantized_tensor`,
`torch._make_per_channel_quantized_tensor`), so no float rounding enters x or w. Per-channel
weights are quantized along axis 0 for conv (C_out) and along axis 1 for transposed conv
(torch's (C_in, C_out/g, *k) layout: axis 1 holds output channels; with groups > 1 that axis
has only C_out/g entries, so per-channel transposed conv is expressed only where the scales
repeat across groups).

Bias: torch takes a float bias and quantizes it itself with x_scale * w_scale[c]; we pass
float32(bias_int * x_scale * w_scale[c]) (float64 product, rounded once to float32). That
round-trips to bias_int whenever |bias_int| < 2^23 (the float32 relative error is below
half a unit there); the adapter checks it in float64 and notes any channel where it may not.

Padding: symmetric conv padding natively; asymmetric conv padding (and SAME with uneven
pads) as a numpy pad of x with its zero point (the real value 0: an exact identity), then
padding 0. Transposed: the torch backend's translation (symmetric min(before, after),
output_padding, then an output crop). channels_last: movedim to NC* and back, as the torch
backend does. int8 (qint8) activations: x86, fbgemm and onednn answer Unsupported, their
BackendConfig (torch.ao.quantization.backend_config) listing conv with quint8 input only;
qnnpack's also lists qint8 input (symmetric, scale >= 2^-12), so there a raise is Rejected.

torch-pt2e (PT2E: torch.export, torchao's X86InductorQuantizer, torch.compile) is backends/torch/pt2e.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, Output, Rejected, Unsupported, first_line
from backends.int8_probe import pair_sums
from backends.torch.eager import TorchBackend, invalid_padding_reason
from backends.torch.onednn_probe import int8_conv_isa
from backends.torch.threads import TorchThreads
from harness.model.case import QUANT_DTYPES, Case
from harness.numerics.inputs import Inputs

FLOAT_REASON = "a quantized engine: it runs uint8/int8 cases only"
TORCH_QDTYPE = {"uint8": "quint8", "int8": "qint8"}
# engines whose BackendConfig documents conv with quint8 activations only (qnnpack's also lists qint8)
QUINT8_ONLY = {"x86": "get_x86_backend_config", "fbgemm": "get_fbgemm_backend_config",
               "onednn": "get_onednn_backend_config"}


class TorchAoBackend(TorchThreads, Backend):
    framework = "torch"
    preload = TorchBackend.preload  # as torch (one zygote for both)
    gradient_preload = TorchBackend.gradient_preload
    devices = ("cpu",)
    engine = ""
    quantized = "torch.ao.nn.quantized Conv/ConvTranspose modules under torch.backends.quantized.engine"
    capabilities = Capabilities(
        padding=("symmetric",),
        padding_identities=("asymmetric conv: pad x with its zero point, then padding 0",
                            "asymmetric transpose: symmetric then crop"),
        dtypes=QUANT_DTYPES,
        devices=("cpu",),
    )

    def setup(self, device: str) -> None:
        import torch

        self.torch = torch
        self.apply_threads()
        engines = list(torch.backends.quantized.supported_engines)
        if self.engine not in engines:
            raise RuntimeError(f"quantized engine {self.engine!r} is not in this torch build's "
                               f"supported_engines {engines}")
        torch.backends.quantized.engine = self.engine

    def host_facts(self, device: str) -> dict[str, HostFact]:
        torch = self.torch
        return {
            "torch_quantized_engine": str(torch.backends.quantized.engine),
            "torch_quantized_engines": [str(e) for e in torch.backends.quantized.supported_engines],
            "torch_onednn_int8_isa": int8_conv_isa(torch, self.engine),
            "torch_int8_pair_sums": pair_sums(lambda case, inputs: self.run(case, inputs, "cpu").array),
        }

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": str(self.torch.__version__), "engine": str(self.torch.backends.quantized.engine)}

    def supports(self, case: Case, device: str) -> str | None:
        if not case.quantized:
            return FLOAT_REASON
        if reason := invalid_padding_reason(case):
            return reason
        if case.dtype == "int8" and self.engine in QUINT8_ONLY:
            return (f"torch documents conv under {self.engine} with quint8 activations only: "
                    f"torch.ao.quantization.backend_config.{QUINT8_ONLY[self.engine]}() lists "
                    "DTypeConfig(input_dtype=torch.quint8, weight_dtype=torch.qint8) alone")
        p = case.quant
        if case.transpose and case.groups > 1 and p is not None and isinstance(p.w_scale, tuple):
            per_group = case.out_channels // case.groups
            if any(p.w_scale[i] != p.w_scale[i % per_group] for i in range(case.out_channels)):
                return ("per-channel transposed conv with groups > 1: torch quantizes the weight along "
                        "axis 1 of (C_in, C_out/g, *k), C_out/g scales shared by every group")
        return None

    # --- the call ------------------------------------------------------------
    def plan(self, case: Case) -> tuple[dict[str, Any], list | None, list | None, list[str]]:
        """Module kwargs (stride, padding, ...), a numpy input pad, an output crop, and notes."""
        geo = case.geometry
        if case.transpose or geo is None:  # geo None: an invalid case, given to torch as written
            return TorchBackend().translate(case)
        kw: dict[str, Any] = {"stride": case.stride, "dilation": case.dilation, "groups": case.groups}
        if all(b == a for b, a in geo.pads):
            kw["padding"] = tuple(b for b, _ in geo.pads)
            return kw, None, None, []
        kw["padding"] = 0
        return kw, list(geo.pads), None, ["asymmetric padding: pad x with its zero point (real 0), then padding 0"]

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if not case.quantized:
            raise Unsupported(FLOAT_REASON)
        reason = self.supports(case, device)
        if reason:
            raise Unsupported(reason)
        torch = self.torch
        import torch.ao.nn.quantized as nnq

        p = inputs.quant
        assert p is not None
        kw, pre_pad, crop, notes = self.plan(case)
        lines = [f"torch.backends.quantized.engine = {self.engine!r}"]
        x = np.moveaxis(inputs.x, -1, 1) if case.channels_last else inputs.x
        if pre_pad:
            x = np.pad(x, [(0, 0), (0, 0), *pre_pad], constant_values=p.x_zero_point)
            lines.append(f"x_int = np.pad(x_int, [(0, 0), (0, 0), *{pre_pad}], constant_values=x_zero_point)")
        x = np.ascontiguousarray(x)
        w = inputs.w
        c_out, g = case.out_channels, case.groups
        axis = 1 if case.transpose else 0
        if case.transpose:  # canonical (C_in, C_out/g, *k): torch's layout already
            groups = max(g, 1)  # below 1: an invalid case's, which torch is handed to refuse
            w_scales = p.w_scale[: c_out // groups]
            if p.per_channel and np.any(np.tile(w_scales, groups) != p.w_scale):
                raise Unsupported("per-channel transposed conv with groups > 1 and scales that differ across "
                                  "groups: torch quantizes the weight along axis 1 of (C_in, C_out/g, *k), "
                                  "C_out/g scales shared by every group")
        else:
            w_scales = p.w_scale
        try:
            with torch.no_grad():
                xq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), p.x_scale, p.x_zero_point)
                wt = torch.from_numpy(np.ascontiguousarray(w))
                if p.per_channel:
                    wq = torch._make_per_channel_quantized_tensor(
                        wt, torch.tensor(w_scales, dtype=torch.float64),
                        torch.full((len(w_scales),), p.w_zero_point, dtype=torch.int64), axis)
                    lines.append(f"w_q = torch._make_per_channel_quantized_tensor(w_int8, w_scales, w_zero_points, axis={axis})")
                else:
                    wq = torch._make_per_tensor_quantized_tensor(wt, float(p.w_scale[0]), p.w_zero_point)
                    lines.append("w_q = torch._make_per_tensor_quantized_tensor(w_int8, w_scale, w_zero_point)")
                bias = None
                if inputs.b is not None:
                    bf = (inputs.b.astype(np.float64) * p.x_scale * p.w_scale).astype(np.float32)
                    bias = torch.from_numpy(bf)
                    back = np.rint(bf.astype(np.float64) / (p.x_scale * p.w_scale))
                    if np.any(back != inputs.b):
                        notes.append(f"float32 bias does not round-trip to the int32 bias in {int(np.sum(back != inputs.b))} channel(s)")
                    lines.append("b = torch.tensor(float32(bias_int32 * x_scale * w_scale))  # torch requantizes it")
                kind = "ConvTranspose" if case.transpose else "Conv"
                cls = getattr(nnq, f"{kind}{case.rank}d")
                args = {"in_channels": case.in_channels, "out_channels": c_out, "kernel_size": case.kernel_size,
                        "bias": inputs.b is not None, **kw}
                m = cls(**args)
                m.set_weight_bias(wq, bias)
                m.scale, m.zero_point = float(p.y_scale), int(p.y_zero_point)
                lines.append(f"m = torch.ao.nn.quantized.{cls.__name__}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")")
                lines += ["m.set_weight_bias(w_q, b)", "m.scale, m.zero_point = y_scale, y_zero_point",
                          f"x_q = torch._make_per_tensor_quantized_tensor(x_int, x_scale, x_zero_point)  # {TORCH_QDTYPE[case.dtype]}"]
                if case.channels_last:
                    xq = torch._make_per_tensor_quantized_tensor(
                        torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, 1, -1))), p.x_scale, p.x_zero_point).movedim(-1, 1)
                    lines.append("x_q = x_q.movedim(-1, 1)  # channels_last memory format")
                y = m(xq)
                lines.append("y = m(x_q)")
                if crop:
                    y = y[(slice(None), slice(None), *(slice(cb, y.shape[2 + i] - ca) for i, (cb, ca) in enumerate(crop)))]
                    lines.append("y = y[:, :, " + ", ".join(f"{cb}:{-ca or None}" for cb, ca in crop) + "]")
                yi = y.int_repr()
                if case.channels_last:
                    yi = yi.movedim(1, -1)
                    lines.append("y = y.movedim(1, -1)")
                lines.append("y_int = y.int_repr()")
                arr = yi.contiguous().numpy()
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        return Output(arr, str(arr.dtype), "\n".join(lines), notes=notes)


class TorchAoX86Backend(TorchAoBackend):
    name, engine = "torch-ao-x86", "x86"


class TorchAoFbgemmBackend(TorchAoBackend):
    name, engine = "torch-ao-fbgemm", "fbgemm"


class TorchAoOnednnBackend(TorchAoBackend):
    name, engine = "torch-ao-onednn", "onednn"


class TorchAoQnnpackBackend(TorchAoBackend):
    name, engine = "torch-ao-qnnpack", "qnnpack"

    def stale_after_run(self, case: Case) -> bool:
        """qnnpack's ConvTranspose3d writes past its output buffer where the full output is extended (output_padding,
        or SAME's missing tail): the next case in the process then dies in malloc or free ("double free or corruption",
        "munmap_chunk(): invalid pointer", SIGSEGV, SIGBUS; known issue torch-ao-qnnpack-conv-transpose3d-wrong,
        measured 2026-12-01, torch 2.13.0: 8 such crashes in a 336-case grid, 2 of them on cases an identity kernel
        computes, right when run alone). So a worker that ran a conv_transpose3d is replaced before the next case."""
        return case.op == "conv_transpose3d" and case.dtype in QUANT_DTYPES
