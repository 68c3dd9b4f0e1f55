"""torch-pt2e: PyTorch's current int8 flow on x86 (issue 25): torch.export, torchao's PT2E quantizer
for x86 inductor, torch.compile.

The model is a float `torch.nn.Conv2d` holding the case's dequantized weights, float32((w - zw) *
w_scale[c]), and bias, float32(bias_int * x_scale * w_scale[c]) (float64 products rounded once). It is
captured with `torch.export.export`, annotated by torchao's `X86InductorQuantizer`
(torchao.quantization.pt2e.quantizer.x86_inductor_quantizer), then `prepare_pt2e`, one calibration
call and `convert_pt2e` (torchao.quantization.pt2e.quantize_pt2e), and compiled with
`torch.compile(backend="inductor", fullgraph=True)` under `torch.no_grad()` with inductor's
`freezing` on, which lowers dequantize -> conv -> quantize to oneDNN's int8 `onednn.qconv_pointwise`.

The case's quantization parameters are pinned, not calibrated: the quantizer's `QuantizationConfig`
(`set_global`) carries them.
- x and y: torchao's `FixedQParamsQuantizationSpec` (uint8, per_tensor_affine, the case's scale and
  zero point), which `prepare_pt2e` turns into a `FixedQParamsObserver`.
- w: torchao has no fixed per-channel observer, so `PinnedObserver` (below) is an observer whose
  `calculate_qparams()` returns the case's scales, with `per_channel_symmetric` on axis 0, the x86
  recipe's weight scheme. A per-tensor weight is given as per-channel with its one scale repeated
  (an exact identity): inductor's weight-prepack pattern matches `dequantize_per_channel` only
  (measured: a `per_tensor_symmetric` weight leaves a float conv in the compiled code).
- y: the x86 recipe leaves a lone conv's output float (in a model, the next int8 op's input
  observer quantizes it; measured: a float32 output). `OutputQuantizer` (an `X86InductorQuantizer`
  whose `annotate` then sets `output_qspec` = y's spec on each conv the recipe marked as the output
  of a quantized pattern) adds the quantize op the next layer would.
`convert_pt2e` ends the graph with quantize_per_tensor -> dequantize_per_tensor; the final dequantize
is dropped, so the compiled model returns the quantize op's uint8 y.

Checked before a result is kept, else Unsupported: the converted graph holds one aten.conv2d
between dequantize_per_tensor (of quantize_per_tensor of x) and dequantize_per_channel (of an int8
constant equal to the case's w), its one user is quantize_per_tensor, and the graph returns that;
after compiling, inductor's counters show the qconv weight prepack and the qconv lowering (no
silent float run). x is fed as float32((x_int - x_zp) * x_scale), which quantizes back to x_int.

What the x86 flow cannot express (found by running, kept in `supports`): conv1d, conv3d and every
transpose (the recipe annotates aten.conv2d only, conv1d only when fused with a following ReLU: the
exported float conv stays float); int8 activations (the recipe quantizes activations as uint8, and
`onednn.qconv_pointwise` raises "Input tensor should have uint8 (unsigned char) or fp8 data type"
on an int8 x); a weight zero point (the quantizer accepts symmetric weight schemes only).

Padding: symmetric, 'same' and 'valid' natively (nn.Conv2d); asymmetric as F.pad of the float x with
0.0 (real zero, which quantizes to x's zero point) before the conv. channels_last: x is an NCHW view
of the NHWC data (torch's channels_last memory format), y moved back. Inductor's caches are
torch-inductor's (`backends.torch.inductor.cache_dir`, one per ISA setting).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os

import numpy as np

from backends.base import Backend, Capabilities, HostFact, Output, Rejected, Unsupported
from backends.torch.eager import TorchBackend, invalid_padding_reason
from backends.torch.inductor import TorchInductorBackend, cache_dir, isa_setting, rejection, vec_isa
from backends.torch.onednn_probe import int8_conv_isa
from backends.torch.threads import TorchThreads
from harness.model.case import Case
from harness.numerics.inputs import Inputs

FLOAT_REASON = "a quantized engine: it runs uint8/int8 cases only"
OP_REASON = ("torchao's X86InductorQuantizer annotates aten.conv2d only (conv1d only when fused with a "
             "following ReLU; conv3d and conv_transpose not at all): the exported {op} stays a float conv")
INT8_REASON = ("torchao's x86 inductor recipe quantizes activations as uint8, and onednn.qconv_pointwise "
               "raises 'Input tensor should have uint8 (unsigned char) or fp8 data type' on an int8 x")
WZP_REASON = ("torchao's X86InductorQuantizer accepts symmetric weight schemes only "
              "(per_tensor_symmetric, per_channel_symmetric): no weight zero point")


class TorchPt2eBackend(TorchThreads, Backend):
    """float nn.Conv2d -> torch.export -> X86InductorQuantizer (pinned qparams) -> torch.compile."""

    name = "torch-pt2e"
    framework = "torch"
    preload = TorchInductorBackend.preload  # as torch-inductor (one zygote for both)
    devices = ("cpu",)
    builds_per_case = True
    quantized = ("PT2E: torch.export, torchao's X86InductorQuantizer with the case's pinned qparams, "
                 "prepare_pt2e/convert_pt2e, torch.compile (inductor, freezing) -> onednn.qconv_pointwise")
    capabilities = Capabilities(
        ops=("conv2d",),
        padding=("symmetric", "same (stride 1)", "valid"),
        padding_identities=("asymmetric: F.pad of the float x with 0.0 (x's zero point once quantized)",
                            "same with stride > 1: explicit pads"),
        output_padding="none",
        dilation="conv",
        groups="conv",
        layouts=("channels_first", "channels_last (NCHW view of NHWC data)"),
        dtypes=("uint8",),
        devices=("cpu",),
    )

    def unavailable_reason(self) -> str | None:
        for module in ("torch", "torchao"):
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed (torch-pt2e needs torch and torchao)"
        return None

    def setup(self, device: str) -> None:
        import torch

        root = cache_dir(isa_setting(torch))
        if root is not None:  # read by inductor when it first compiles
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root)
        import torch._dynamo
        import torch._inductor.config

        from backends.torch import pt2e_quantizer

        self.torch = torch
        self.apply_threads()
        self.dynamo = torch._dynamo
        self.inductor_config = torch._inductor.config
        if root is None:
            self.inductor_config.fx_graph_cache = False
        self.quantizer = pt2e_quantizer

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": str(self.torch.__version__), "torchao": importlib.metadata.version("torchao"),
                "freezing": "True", "isa": isa_setting(self.torch)}

    def host_facts(self, device: str) -> dict[str, HostFact]:
        # inductor lowers the quantized conv to oneDNN's qconv: the same kernels as the onednn engine's
        return {"torch_cpu_capability": str(self.torch.backends.cpu.get_cpu_capability()),
                "inductor_vec_isa": vec_isa(), "torch_onednn_int8_isa": int8_conv_isa(self.torch, "onednn")}

    def supports(self, case: Case, device: str) -> str | None:
        if not case.quantized:
            return FLOAT_REASON
        if case.op != "conv2d":
            return OP_REASON.format(op=case.op)
        if case.dtype == "int8":
            return INT8_REASON
        if case.quant is not None and case.quant.w_zero_point:
            return WZP_REASON
        return invalid_padding_reason(case)  # as torch-ao's engines: F.pad's crop would judge it, not torch

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        reason = self.supports(case, device)
        if reason:
            raise Unsupported(reason)
        p = inputs.quant
        assert p is not None
        if p.w_zero_point:
            raise Unsupported(WZP_REASON)
        torch = self.torch
        kw, pre_pad, _, notes = TorchBackend().translate(case)
        if not p.per_channel:
            notes.append("per-tensor weight scale given per channel, repeated (inductor prepacks dequantize_per_channel only)")
        x_nc = np.moveaxis(inputs.x, -1, 1) if case.channels_last else inputs.x
        x_real = ((x_nc.astype(np.float64) - p.x_zero_point) * p.x_scale).astype(np.float32)
        if case.channels_last:  # an NCHW view of NHWC data: channels_last memory format
            x = torch.from_numpy(np.ascontiguousarray(np.moveaxis(x_real, 1, -1))).movedim(-1, 1)
        else:
            x = torch.from_numpy(np.ascontiguousarray(x_real))
        model = self.quantizer.float_conv(torch, case, inputs, kw, pre_pad)
        stats = self.dynamo.utils.counters["stats"]
        self.dynamo.reset()
        try:
            converted = self.quantizer.quantize(torch, model, x, p, case.out_channels)
        except Exception as exc:  # noqa: BLE001 - export or the quantizer raised on a valid case: a finding
            raise Rejected(rejection(exc)) from None
        problem = self.quantizer.check_graph(torch, converted, inputs.w)
        if problem:
            raise Unsupported(f"the converted graph is not an int8 conv: {problem}")
        self.dynamo.utils.counters["inductor"].clear()
        before = stats["unique_graphs"]
        try:
            compiled = torch.compile(converted, backend="inductor", fullgraph=True)
            with torch.no_grad(), self.inductor_config.patch(freezing=True):
                y = compiled(x)
        except Exception as exc:  # noqa: BLE001 - dynamo or inductor raised on a valid case: a finding
            raise Rejected(rejection(exc)) from None
        finally:
            graphs = stats["unique_graphs"] - before
            inductor = self.dynamo.utils.counters["inductor"]  # read after: the first compile replaces the Counter
            lowered = {k: int(inductor[k]) for k in ("qconv_weight_prepack_matcher_count", "qconv_unary_lower_count")}
            self.dynamo.reset()
        if graphs < 1:
            raise Rejected("torch.compile compiled no graph (dynamo ran the module eagerly)")
        if not all(lowered.values()):
            raise Unsupported(f"inductor did not lower the quantized conv to onednn.qconv_pointwise ({lowered})")
        if y.dtype != torch.uint8:
            raise Rejected(f"the compiled model returned {y.dtype}, not the quantize op's uint8")
        if case.channels_last:
            y = y.movedim(1, -1)
        arr = y.contiguous().numpy()
        return Output(arr, str(arr.dtype), "\n".join(self.quantizer.translation(case, kw, pre_pad, p)), notes=notes)

    run_gradients = Backend.run_gradients
