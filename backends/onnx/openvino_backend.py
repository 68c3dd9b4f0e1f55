"""OpenVINO: the hand-built one-node ONNX model read by `Core.read_model` and compiled for CPU.

The same checked model as `onnxruntime` and tvm-onnx-import (backends/onnx/model.py),
serialized and read from memory by OpenVINO's ONNX frontend, then `compile_model(model,
"CPU")` with every property at OpenVINO's default. Its default inference precision is
part of what is under test: the CPU plugin lowers f32 models to bf16 on CPUs with
AVX512_BF16 or AMX and keeps f32 elsewhere. The precision the compiled model actually
uses (its INFERENCE_PRECISION_HINT, read live) is in fingerprint() and in the host fact
`openvino_inference_precision`, on which known issues select.

Quantized cases (uint8/int8): the QDQ model (backends/onnx/qmodel.py) for all six ops,
DequantizeLinear -> Conv/ConvTranspose -> QuantizeLinear, which OpenVINO's low-precision
transformations turn into int8 convolution kernels (oneDNN inside the CPU plugin). The runtime
precision of the compiled conv (its execution graph's runtimePrecision) is in the translation.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np

from backends.artifacts import cache_base
from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.onnx.model import (
    ONNX_EPILOGUE_OPS,
    build_model,
    dtype_reason,
    node_attributes,
    node_lines,
    residual_arrays,
    residual_inputs,
)
from backends.onnx.openvino_probe import conv_precisions, int8_grouped_conv3d_kernel, int8_pair_sums
from backends.onnx.qmodel import build_quant_model, quant_lines, quant_reason
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class OpenVinoBackend(Backend):
    """ONNX Conv / ConvTranspose through OpenVINO's ONNX frontend and CPU plugin, default precision hints."""
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "openvino"
    framework = "openvino"
    epilogue_ops = ONNX_EPILOGUE_OPS  # the epilogue as ONNX nodes (backends/onnx/model.py): OpenVINO may fuse them
    devices = ("cpu",)
    quantized = "the ONNX QDQ model (DequantizeLinear -> Conv/ConvTranspose -> QuantizeLinear), low-precision transformations"
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float64", "float16", "bfloat16 (ONNX opset 22)", "uint8, int8 (QDQ)"),
        devices=("cpu",),
    )

    def unavailable_reason(self) -> str | None:
        import importlib.util

        for module in ("openvino", "onnx"):
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed (pip install 'convdiff[openvino]')"
        return None

    threads: int | None = None  # set_threads: the CPU plugin's INFERENCE_NUM_THREADS

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return int(self.core.get_property("CPU", "INFERENCE_NUM_THREADS")) or None  # 0: the plugin decides

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        # Measured 2026-11-29 (openvino 2026.4.1, 2-core AMD EPYC Zen 4; six convolutions, with and without
        # epilogues): SNIPPETS_MODE=DISABLE, PERFORMANCE_HINT=THROUGHPUT, CPU_RUNTIME_CACHE_CAPACITY=0, and
        # EXECUTION_MODE_HINT=ACCURACY with the default precision pinned each compiled the same oneDNN primitive
        # (brgconv) and gave the same bits; a PrimitivesPriority rt_info on the node was ignored.
        raise Unsupported("openvino: the CPU plugin has no setting that picks another convolution kernel at the same "
                          "precision (EXECUTION_MODE_HINT=ACCURACY changes the precision, bf16 to f32 where it "
                          "lowers to bf16; the performance, snippets and cache settings keep the same kernel)")

    def setup(self, device: str) -> None:
        import openvino as ov

        self.ov = ov
        self.core = ov.Core()
        if self.threads:  # every compile_model on the CPU plugin after this
            self.core.set_property("CPU", {"INFERENCE_NUM_THREADS": self.threads})
        self._precision: str | None = None
        cache = compile_cache_dir(self.core, ov.__version__)
        if cache is not None:
            self.core.set_property({"CACHE_DIR": str(cache)})

    def device_reason(self, device: str) -> str | None:
        if device == "cpu":
            return None
        if device == "cuda":
            return "OpenVINO has no CUDA device (its GPU plugin targets Intel GPUs)"
        return f"unknown device {device}"

    def inference_precision(self) -> str:
        """The precision the CPU plugin really computes an f32 model in: compile a tiny f32 Conv with
        default properties and read the compiled model's INFERENCE_PRECISION_HINT (e.g. bf16, f32);
        "rejected (<reason>)" where that compile raises."""
        if self._precision is None:
            from harness.model.build import make_case

            probe = make_case(id="precision_probe", op="conv2d", in_channels=1, out_channels=1,
                              input_size=1, kernel_size=1)
            attrs, _ = node_attributes(probe)
            w = np.ones(probe.weight_shape, np.float32)
            try:
                compiled = self.compile(build_model(probe, w, None, attrs).SerializeToString())
            except Exception as exc:  # noqa: BLE001 - e.g. bf16 chosen from CPUID, oneDNN capped below it
                lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
                self._precision = f"rejected ({lines[-1][:60] if lines else type(exc).__name__})"
                return self._precision
            self._precision = precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
        return self._precision

    def host_facts(self, device: str) -> dict[str, HostFact]:
        return {"openvino_inference_precision": self.inference_precision(),
                "openvino_int8_pair_sums": int8_pair_sums(self.compile),
                "openvino_int8_grouped_conv3d_kernel": int8_grouped_conv3d_kernel(self.compile)}

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": self.ov.__version__, "device": "CPU",
                "inference_precision": self.inference_precision(),
                "cpu": str(self.core.get_property("CPU", "FULL_DEVICE_NAME"))}

    def supports(self, case: Case, device: str) -> str | None:
        if case.quantized:
            return quant_reason(case)
        # bfloat16: an opset-22 model (onnx_model.BFLOAT16_OPSET), which OpenVINO runs (found by --probe)
        return None if case.dtype == "bfloat16" else dtype_reason(case)

    def compile(self, model: bytes) -> Any:
        return self.core.compile_model(self.core.read_model(model), "CPU")

    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]:
        """The node's attributes, the translation lines and the notes (pure: shared with the repro script)."""
        attrs, notes = node_attributes(case)
        lines, notes = node_lines(case, attrs, notes)
        lines += ["onnx.checker.check_model(model)",
                  "compiled = ov.Core().compile_model(ov.Core().read_model(model.SerializeToString()), 'CPU')",
                  "y = compiled({" + ", ".join(f"{n!r}: {n}" for n in ["x", *residual_inputs(case)])
                  + "})[compiled.output(0)]"]
        return attrs, lines, notes

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if case.quantized:
            return self.run_quantized(case, inputs)
        attrs, lines, notes = self.plan(case)
        try:
            model = build_model(case, inputs.w, inputs.b, attrs, inputs.epilogue)
            compiled = self.compile(model.SerializeToString())
            feeds = dict(zip(["x", *residual_inputs(case)], (inputs.x, *residual_arrays(case, inputs))))
            y = np.asarray(compiled(feeds)[compiled.output(0)])
            precision = precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        lines[-1] += f"  # compiled INFERENCE_PRECISION_HINT: {precision}"
        if case.dtype == "bfloat16" and y.dtype == np.float16:  # numpy has no bf16: OpenVINO hands back its bits
            import ml_dtypes

            y = y.view(ml_dtypes.bfloat16)
            lines.append("y = y.view(ml_dtypes.bfloat16)  # OpenVINO returns a bf16 output as float16-typed bits")
        return Output(y, str(y.dtype), "\n".join(lines), notes=notes)

    def run_quantized(self, case: Case, inputs: Inputs) -> Output:
        """The QDQ model compiled for CPU at default properties; the conv's runtime precision read back."""
        reason = quant_reason(case, inputs)
        if reason:
            raise Unsupported(reason)
        attrs, notes = node_attributes(case)
        lines, notes = quant_lines(case, attrs, "qdq", inputs, notes)
        try:
            model = build_quant_model(case, inputs, attrs, "qdq")
            compiled = self.compile(model.SerializeToString())
            y = np.asarray(compiled({"x": inputs.x})[compiled.output(0)])
            convs = conv_precisions(compiled)
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        lines += ["onnx.checker.check_model(model)",
                  "compiled = ov.Core().compile_model(ov.Core().read_model(model.SerializeToString()), 'CPU')",
                  "y = compiled({'x': x})[compiled.output(0)]",
                  f"# execution graph convolutions (layerType: runtimePrecision/primitiveType): {convs or 'none found'}"]
        return Output(y, str(y.dtype), "\n".join(lines), notes=notes)


def compile_cache_dir(core: Any, version: str) -> str | None:
    """Where OpenVINO keeps its compiled models for this CPU and ISA cap, or None when caching is off."""
    base = cache_base()
    if base is None:
        return None
    decides = {"version": version, "device": str(core.get_property("CPU", "FULL_DEVICE_NAME")),
               "capabilities": sorted(str(c) for c in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
               "cap": [os.environ.get(k, "") for k in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")]}
    digest = hashlib.sha256(repr(sorted(decides.items())).encode()).hexdigest()[:16]
    return str((base / "openvino" / digest).resolve())


def precision_name(t: Any) -> str:
    """OpenVINO's short element-type name (bf16, f32, f16) for a Type or its string."""
    name = getattr(t, "get_type_name", None)
    return str(name() if callable(name) else t)
