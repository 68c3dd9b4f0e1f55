"""ONNX Runtime: the hand-built one-node ONNX model (backends/onnx/model.py) in an InferenceSession.

`onnxruntime` runs the same checked model tvm-onnx-import reads, on ONNX Runtime's
CPU execution provider (CUDA provider on `cuda`, where this onnxruntime build has it).
Session options stay at ONNX Runtime's defaults (graph optimizations on): the code path
a deployed model takes. The `layout` relation also runs every path ending in ONNX Runtime with
graph_optimization_level ORT_DISABLE_ALL (its kernel variant: no fusion, no layout transformation)
against that default. OrtBase is also the runtime of the converter paths
(torch-onnx-ort, tf2onnx-ort, paddle2onnx-ort): with the same runtime on both sides,
`onnxruntime` is their control.

Quantized cases (uint8/int8, backends/onnx/qmodel.py): `onnxruntime` builds a QLinearConv node for
conv ops and the QDQ form (DequantizeLinear -> ConvTranspose -> QuantizeLinear) for conv_transpose
ops; `onnxruntime-qdq` builds the QDQ form for all six ops, so both QLinearConv and ORT's QDQ fusion
are judged. The session saves its optimized model (SessionOptions.optimized_model_filepath, all
else default) and the translation says which nodes ORT really ran: for QDQ, whether it fused the
group into an integer kernel (QLinearConv / com.microsoft.QLinearConvTranspose) or kept float.

Dtypes: ONNX Runtime has a Conv/ConvTranspose kernel per (provider, type); a case whose
dtype has none there is `unsupported`, read live from its kernel registry (the CPU
provider registers float only).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.int8_probe import pair_sums
from backends.onnx.model import (
    ONNX_EPILOGUE_OPS,
    build_model,
    dtype_reason,
    node_attributes,
    node_lines,
    residual_arrays,
    residual_inputs,
)
from backends.onnx.qmodel import build_quant_model, form_for, optimized_ops, quant_lines, quant_reason
from harness.model.case import Case
from harness.numerics.inputs import Inputs

PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
ORT_TYPES = {"tensor(float)": "float32", "tensor(double)": "float64", "tensor(float16)": "float16",
             "tensor(bfloat16)": "bfloat16"}


class OrtBase(Backend):
    """Import, providers, the kernel registry, and one session run: shared by every path ending in ONNX Runtime."""

    framework = "onnxruntime"
    runtime_name = "onnxruntime"  # shown in unsupported reasons

    def unavailable_reason(self) -> str | None:
        import importlib.util

        for module, extra in (("onnxruntime", "onnx"), ("onnx", "onnx"), *self.converter_modules()):
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed (pip install 'convdiff[{extra}]')"
        return None

    def converter_modules(self) -> tuple[tuple[str, str], ...]:
        """(module, extra) pairs a converter path needs besides onnx and onnxruntime."""
        return ()

    threads: int | None = None  # set_threads: SessionOptions.intra_op_num_threads of every session

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return self.threads  # None: ORT's default (one intra-op thread per physical core), which it does not report

    # use_kernel_variant: SessionOptions.graph_optimization_level of every session (None: ORT's default,
    # ORT_ENABLE_ALL). Off, the graph runs node by node as the model states it: no fusion (Conv + epilogue,
    # the QDQ group into QLinearConv) and no layout transformation (NCHWc, NHWC), so other kernels run.
    graph_level: str | None = None

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        return (KernelVariant("ORT_DISABLE_ALL", "SessionOptions.graph_optimization_level = ORT_DISABLE_ALL "
                              "(default ORT_ENABLE_ALL): no graph fusions or layout transformations"),)

    def use_kernel_variant(self, name: str) -> None:
        if name != "ORT_DISABLE_ALL":
            super().use_kernel_variant(name)
        self.graph_level = name

    def setup(self, device: str) -> None:
        import onnxruntime as ort

        ort.set_default_logger_severity(3)  # errors only: warnings about unused initializers are noise here
        self.ort = ort
        self._kernels: dict[tuple[str, str], set[str]] = {}

    def device_reason(self, device: str) -> str | None:
        if device not in PROVIDERS:
            return f"unknown device {device}"
        have = self.ort.get_available_providers()
        if PROVIDERS[device] not in have:
            return (f"onnxruntime {self.ort.__version__} has no {PROVIDERS[device]} (available: {', '.join(have)}; "
                    "the CUDA provider comes with the onnxruntime-gpu wheel)")
        return None

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": self.ort.__version__, "provider": PROVIDERS[device]}

    def kernel_dtypes(self, op: str, device: str) -> set[str]:
        """Dtypes of the ai.onnx kernels registered for `op` on the device's provider (ONNX Runtime's registry)."""
        key = (op, device)
        if key not in self._kernels:
            from onnxruntime.capi import onnxruntime_pybind11_state as C

            found: set[str] = set()
            for d in C.get_all_opkernel_def():
                if d.op_name == op and d.domain in ("", "ai.onnx") and d.provider == PROVIDERS[device]:
                    found.update(ORT_TYPES.get(t, t) for t in d.type_constraints.get("T", []))
            self._kernels[key] = found
        return self._kernels[key]

    def runtime_reason(self, case: Case, device: str) -> str | None:
        """Why ONNX Runtime has no kernel for this case on this device, or None."""
        op = "ConvTranspose" if case.transpose else "Conv"
        have = self.kernel_dtypes(op, device)
        if case.dtype == "float16" and "float32" in have:
            # ONNX Runtime's InsertCastTransformer runs a float16 node that has no float16 kernel in
            # float32 between Casts: the session accepts the model (found by convdiff backends --probe)
            return None
        if case.dtype not in have:
            return (f"onnxruntime {self.ort.__version__} registers no {case.dtype} {op} kernel on {PROVIDERS[device]} "
                    f"(registered: {', '.join(sorted(have)) or 'none'})")
        return None

    def session_line(self, device: str) -> str:
        level = f"  # options: graph_optimization_level = {self.graph_level}" if self.graph_level else ""
        return f"sess = ort.InferenceSession(model.SerializeToString(), providers=[{PROVIDERS[device]!r}]){level}"

    def run_model(self, model: bytes, x: np.ndarray, device: str,
                  more: tuple[np.ndarray, ...] = (), options: Any = None) -> tuple[np.ndarray, str]:
        """One InferenceSession on the serialized model, default options (or `options`, a SessionOptions),
        x fed to its first input and `more` (e.g. an epilogue's residuals) to the next ones in order;
        the first output and its dtype."""
        if self.threads:
            options = options or self.ort.SessionOptions()
            options.intra_op_num_threads = self.threads
        if self.graph_level:
            options = options or self.ort.SessionOptions()
            options.graph_optimization_level = getattr(self.ort.GraphOptimizationLevel, self.graph_level)
        try:
            sess = self.ort.InferenceSession(model, sess_options=options, providers=[PROVIDERS[device]])
            y = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), (x, *more))})[0]
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        arr = np.asarray(y)
        return arr, str(arr.dtype)


class OnnxRuntimeBackend(OrtBase):
    """The hand-built Conv / ConvTranspose node: pads, strides, dilations, group, output_padding, auto_pad;
    the epilogue as ONNX nodes after it (ORT's graph optimizations may fuse them)."""

    name = "onnxruntime"
    epilogue_ops = ONNX_EPILOGUE_OPS
    quant_form = "qlinear"  # conv ops: QLinearConv; conv_transpose ops: QDQ (ONNX has no QLinearConvTranspose)
    quantized = "QLinearConv (conv ops); DequantizeLinear -> ConvTranspose -> QuantizeLinear (conv_transpose ops)"
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float16 (CPU: float32 between Casts ORT inserts)", "float64: where the provider registers it (CPU: no)",
                "uint8, int8: QLinearConv (conv), QDQ (conv_transpose)"),
    )

    def supports(self, case: Case, device: str) -> str | None:
        if case.quantized:
            return quant_reason(case)
        return dtype_reason(case) or self.runtime_reason(case, device)

    def host_facts(self, device: str) -> dict[str, HostFact]:
        return {"ort_int8_pair_sums": pair_sums(lambda case, inputs: self.run_quantized(case, inputs, "cpu").array)}

    def plan(self, case: Case, device: str) -> tuple[dict[str, Any], list[str], list[str]]:
        """The node's attributes, the translation lines and the notes (pure: shared with the repro script)."""
        attrs, notes = node_attributes(case)
        lines, notes = node_lines(case, attrs, notes)
        feeds = ", ".join(f"{n!r}: {n}" for n in ["x", *residual_inputs(case)])
        lines += ["onnx.checker.check_model(model)", self.session_line(device), f"y = sess.run(None, {{{feeds}}})[0]"]
        return attrs, lines, notes

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if case.quantized:
            return self.run_quantized(case, inputs, device)
        attrs, lines, notes = self.plan(case, device)
        try:
            model = build_model(case, inputs.w, inputs.b, attrs, inputs.epilogue)
        except Exception as exc:  # noqa: BLE001 - onnx.checker refused the model: a finding
            raise Rejected(first_line(exc)) from None
        arr, dtype = self.run_model(model.SerializeToString(), inputs.x, device, residual_arrays(case, inputs))
        return Output(arr, dtype, "\n".join(lines), notes=notes)

    def run_quantized(self, case: Case, inputs: Inputs, device: str) -> Output:
        """The QLinearConv or QDQ model (backends/onnx/qmodel.py) in a session that saves its optimized model."""
        import os
        import tempfile

        reason = quant_reason(case, inputs)
        if reason:
            raise Unsupported(reason)
        form = form_for(case, self.quant_form)
        attrs, notes = node_attributes(case)
        lines, notes = quant_lines(case, attrs, form, inputs, notes)
        try:
            model = build_quant_model(case, inputs, attrs, form)
        except Exception as exc:  # noqa: BLE001 - onnx.checker refused the model: a finding
            raise Rejected(first_line(exc)) from None
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "optimized.onnx")
            options = self.ort.SessionOptions()
            options.optimized_model_filepath = path
            arr, dtype = self.run_model(model.SerializeToString(), inputs.x, device, options=options)
            ops = optimized_ops(path) if os.path.exists(path) else []
        lines += ["onnx.checker.check_model(model)",
                  "so = ort.SessionOptions(); so.optimized_model_filepath = 'optimized.onnx'  # all else default",
                  self.session_line(device).replace("])", "], sess_options=so)"), "y = sess.run(None, {'x': x})[0]"]
        kept = [op for op in ops if op not in ("Transpose",)]
        lines.append(f"# optimized graph: {' -> '.join(ops) or 'not saved'}")
        if form == "qdq":
            fused = not any(op in ("Conv", "ConvTranspose") for op in kept)
            lines.append("# ORT fused the QDQ group into an integer kernel" if fused else
                         "# ORT did NOT fuse the QDQ group: the conv runs in float between DequantizeLinear/QuantizeLinear")
        return Output(arr, dtype, "\n".join(lines), notes=notes)


class OnnxRuntimeQdqBackend(OnnxRuntimeBackend):
    """Quantized cases only, every op in the QDQ form: ORT's QDQ fusion (QLinearConv from DQ -> Conv -> Q) judged."""

    name = "onnxruntime-qdq"
    quant_form = "qdq"
    quantized = "DequantizeLinear -> Conv/ConvTranspose -> QuantizeLinear (QDQ), fused by ORT's graph optimizations"
    epilogue_ops = ()
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the model (exact permutation)"),
        dtypes=("uint8, int8: QDQ (float cases: onnxruntime)",),
    )

    def supports(self, case: Case, device: str) -> str | None:
        if not case.quantized:
            return "onnxruntime-qdq runs quantized (uint8/int8) cases only; float cases: onnxruntime"
        return quant_reason(case)
