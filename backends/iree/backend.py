"""IREE on the CPU: the hand-built ONNX model (backends/onnx/model.py) imported with iree-import-onnx,
compiled by iree-compile for llvm-cpu with the host CPU as target, and run by the IREE runtime.

`iree` reads the same checked model onnxruntime and openvino run (the Conv / ConvTranspose node with
pads, strides, dilations, group, output_padding, auto_pad; channels_last as Transpose nodes around it;
the epilogue as ONNX nodes after it), so the three steps are those of a user deploying an ONNX model
with IREE: backends/iree/compile.py imports and compiles, backends/iree/runtime.py runs. The
translation names the flags and, from iree-compile's configured executables, each dispatch and the
code generation pipeline it got, and the CPU `host` resolved to.

Quantized cases (uint8/int8): the QDQ model ONNX Runtime's and OpenVINO's QDQ paths run
(backends/onnx/qmodel.py: DequantizeLinear of x, w and the int32 bias -> Conv/ConvTranspose -> QuantizeLinear),
the form ONNX Runtime's quantize_static writes by default and exporters emit, for all six ops. torch-mlir's
ONNX conversion and its quantized-op fusion turn the group into a convolution on the integers where they can
(a dispatch named ..._conv_..._i8xi8xi32) and compute it in float on the dequantized values elsewhere (..._f32):
the translation says which, read from the dispatch names. `iree-qlinear` (IreeQLinearBackend) builds one
QLinearConv node instead (conv ops; ONNX has no QLinearConvTranspose). The runtime hands a uint8 result back
as int8 (the function's i8 is signless): the bits are reinterpreted as uint8, and the translation says so.

Refusals: the importer's or iree-compile's first error line (an MLIR verifier message, "failed to
legalize operation ...") is `rejected`. An iree-compile that dies by a signal ("iree-compile crashed
(SIGABRT): <its assertion>") is a `crash` (backends.base.Crashed), though the worker survives it: the
compiler is a child process.

Cost (backends/artifacts.py): the .vmfb is cached under a key over the case (without its seed, with the
digest of the weights, and of a quantized case's scales and zero points, the model bakes in; the quantized
form), the IREE and onnx versions, the target flags, the host CPU
(cpu model and ISA flags: `host` compiles for this CPU) and the sources that write the model; a refusal
is cached as its message. A warm run imports and compiles nothing. prepare() compiles many cases as
the functions of one module (backends/iree/batch.py).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Backend, Capabilities, Crashed, HostFact, Output, Rejected, Unsupported, first_line
from backends.iree import batch
from backends.iree.compile import CRASHED, TARGET_FLAGS, CompileFailed, compile_mlir, import_models, versions
from backends.iree.facts import target_facts
from backends.iree.runtime import DRIVER, Modules, call
from backends.onnx.model import (
    ONNX_EPILOGUE_OPS,
    build_model,
    dtype_reason,
    node_attributes,
    node_lines,
    residual_arrays,
)
from backends.onnx.qmodel import build_quant_model, form_for, quant_lines, quant_reason
from harness.model.case import Case
from harness.numerics.inputs import Inputs

SOURCES = ("iree/backend.py", "iree/compile.py", "onnx/model.py", "onnx/qmodel.py", "pads.py")
FUNCTION = "main"  # the graph's name, hence the function's, in a module of one case
DTYPES = ("float32", "float16", "float64", "bfloat16")
FORMS = {"qdq": "the QDQ form (DequantizeLinear -> {op} -> QuantizeLinear), as ONNX Runtime's quantize_static "
                "writes it by default",
         "qlinear": "the QLinearConv form (one QLinearConv node), as ONNX Runtime's quantizer writes it with "
                    "QuantFormat.QOperator"}
UINT8_VIEW = ("y = y.view(np.uint8)  # the IREE runtime returns the model's uint8 output as int8 (the compiled "
              "function's i8 is signless): the same bits")


class IreeBackend(Backend):
    """ONNX -> iree-import-onnx -> iree-compile (llvm-cpu, host CPU) -> IREE runtime (local-task)."""

    name = "iree"
    framework = "iree.runtime"
    distribution = "iree-base-runtime"
    preload = ("onnx", "iree.compiler.extras.onnx_importer")
    devices = ("cpu",)
    epilogue_ops = ONNX_EPILOGUE_OPS
    builds_per_case = True
    batch_size = 16
    quant_form = "qdq"  # the quantized model (backends/onnx/qmodel.py FORMS)
    quantized = ("the ONNX QDQ model (DequantizeLinear -> Conv/ConvTranspose -> QuantizeLinear), fused by "
                 "iree-compile into an integer convolution where it can")
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float16", "float64", "bfloat16 (opset 22 model)",
                "uint8, int8: the QDQ model (DequantizeLinear -> Conv/ConvTranspose -> QuantizeLinear)"),
        devices=("cpu",),
    )

    def unavailable_reason(self) -> str | None:
        for module in ("iree.runtime", "iree.compiler", "onnx"):
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
            if not found:
                return f"{module} is not installed (pip install 'convdiff[iree]')"
        return None

    def version(self) -> str:
        return versions()["iree-base-compiler"]

    threads: int | None = None  # set_threads: the local-task driver's topology, --task_topology_group_count

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return self.threads  # None: IREE's default topology (a group per physical core), which it does not report

    def setup(self, device: str) -> None:
        if self.threads:  # the runtime's flags, read when the local-task driver first makes its device
            import iree.runtime as rt

            rt.flags.parse_flags(f"--task_topology_group_count={self.threads}")
        self.versions = versions()
        self.modules = Modules()
        self.cache = ArtifactCache("iree")  # backends/artifacts.py: module.vmfb + meta.json, or the refusal
        self.salt = {**self.versions, "flags": list(TARGET_FLAGS), "sources": sources_digest(SOURCES),
                     "cpu": host_cpu()}
        self._target: dict[str, HostFact] | None = None

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": self.versions["iree-base-compiler"], "runtime": self.versions["iree-base-runtime"],
                "driver": DRIVER}

    def host_facts(self, device: str) -> dict[str, HostFact]:
        if self._target is None:
            self._target = target_facts(self.salt)
        return dict(self._target)

    def supports(self, case: Case, device: str) -> str | None:
        if case.quantized:
            return quant_reason(case)
        if case.dtype == "bfloat16":
            return None  # an opset-22 model (backends/onnx/model.py BFLOAT16_OPSET)
        return dtype_reason(case)

    def form(self, case: Case) -> str:
        """The quantized model's form for this case (qmodel.form_for: QLinearConv has no transposed op)."""
        return form_for(case, self.quant_form)

    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]:
        """The node's attributes, the translation lines and the notes (pure: shared with the repro script)."""
        attrs, notes = node_attributes(case)
        if case.quantized:
            form = self.form(case)
            lines, notes = quant_lines(case, attrs, form, quant_view(case), notes)
            op = "ConvTranspose" if case.transpose else "Conv"
            lines.insert(0, f"# quantized model: {FORMS[form].format(op=op)}")
        else:
            lines, notes = node_lines(case, attrs, notes)
        lines += ["onnx.checker.check_model(model); onnx.save(model, 'model.onnx')",
                  "iree-import-onnx model.onnx -o model.mlir",
                  "iree-compile model.mlir " + " ".join(TARGET_FLAGS) + " -o model.vmfb",
                  f"y = iree.runtime.load_vm_flatbuffer_file('model.vmfb', driver={DRIVER!r}).{FUNCTION}(x).to_host()"]
        if case.dtype == "uint8":
            lines.append(UINT8_VIEW)
        return attrs, lines, notes

    def key(self, case: Case, inputs: Inputs) -> str:
        # a quantized case's key names its form: `iree` and `iree-qlinear` share the cache kind
        return case_key(case, inputs, {**self.salt, "form": self.form(case)} if case.quantized else self.salt)

    def model(self, case: Case, inputs: Inputs, attrs: dict[str, Any]) -> Any:
        try:
            if case.quantized:
                return build_quant_model(case, inputs, attrs, self.form(case))
            return build_model(case, inputs.w, inputs.b, attrs, inputs.epilogue)
        except Exception as exc:  # noqa: BLE001 - onnx.checker refused the model: a finding
            raise Rejected(first_line(exc)) from None

    def compile_one(self, model: Any) -> dict[str, bytes]:
        """The cache entry of one case: its own module (function FUNCTION) and what the compiler reported."""
        compiled = compile_mlir(import_models([(FUNCTION, model)]))
        meta = {"function": FUNCTION, "dispatches": compiled.dispatches, "target_cpu": compiled.target_cpu,
                "features": compiled.features}
        return {"module.vmfb": compiled.vmfb, "meta.json": json.dumps(meta).encode()}

    def entry(self, case: Case, inputs: Inputs, attrs: dict[str, Any]) -> tuple[str, bytes, dict[str, Any], str]:
        """(module name, .vmfb, meta, how it was found) for the case; Rejected with the compiler's message."""
        key = self.key(case, inputs)
        files, how = self.cache.fetch(key, lambda: self.compile_one(self.model(case, inputs, attrs)),
                                      lambda exc: str(exc) if isinstance(exc, (CompileFailed, Rejected))
                                      else first_line(exc))
        if isinstance(files, str):  # the refusal or crash, cached as its message
            raise (Crashed if files.startswith(CRASHED) else Rejected)(files)
        meta = json.loads(files["meta.json"])
        if "batch" in meta:  # compiled with other cases (backends/iree/batch.py): the batch's module
            batch = ArtifactCache("iree-batch").load(meta["batch"])
            if not isinstance(batch, dict):
                raise FileNotFoundError(f"the batch module {meta['batch'][:12]} of this case is gone from the cache")
            return meta["batch"], batch["module.vmfb"], meta, how
        return key, files["module.vmfb"], meta, how

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        reason = quant_reason(case, inputs) if case.quantized else None  # per-channel scales: known from inputs only
        if reason:
            raise Unsupported(reason)
        attrs, lines, notes = self.plan(case)
        self.model(case, inputs, attrs)  # onnx.checker's verdict before any cache: a refused model is Rejected
        name, vmfb, meta, how = self.entry(case, inputs, attrs)
        try:
            fn = self.modules.function(name, vmfb, meta["function"])
            y = call(fn, (inputs.x, *residual_arrays(case, inputs)))
        except Exception as exc:  # noqa: BLE001 - the runtime refused the module or the call: a finding
            raise Rejected(first_line(exc)) from None
        if case.dtype == "uint8" and y.dtype == np.int8:
            y = y.view(np.uint8)  # UINT8_VIEW, in the translation
        lines += dispatch_lines(meta, how)
        if case.quantized:
            lines.append(integer_line(meta, self.form(case)))
        return Output(y, str(y.dtype), "\n".join(lines), notes=notes)

    def prepare(self, cases: list[Case], device: str, inputs: list[Inputs] | None = None) -> dict[str, int]:
        return batch.prepare(self, cases, device, inputs)


class IreeQLinearBackend(IreeBackend):
    """Quantized conv cases only, as one QLinearConv node (ONNX's QOperator form) through the same three steps."""

    name = "iree-qlinear"
    quant_form = "qlinear"
    epilogue_ops = ()
    quantized = "one ONNX QLinearConv node (conv ops), lowered by torch-mlir's ONNX conversion inside iree-compile"
    capabilities = Capabilities(
        ops=("conv1d", "conv2d", "conv3d"),
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        output_padding="none",
        dilation="conv",
        groups="conv",
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("uint8, int8: QLinearConv (float cases: iree)",),
        devices=("cpu",),
    )

    def supports(self, case: Case, device: str) -> str | None:
        if not case.quantized:
            return "iree-qlinear runs quantized (uint8/int8) cases only; float cases: iree"
        if case.transpose:
            return ("ONNX has no QLinearConvTranspose (QLinearConv is a forward convolution); the QDQ form of a "
                    "quantized transposed convolution runs on iree")
        return quant_reason(case)


def quant_view(case: Case) -> Any:
    """What qmodel.quant_lines reads of a case's Inputs (`quant.per_channel`), from the case alone: plan() is
    pure, so that the reproducer writes the same lines."""
    q = case.quant
    return SimpleNamespace(quant=SimpleNamespace(per_channel=q is not None and (q.per_channel or
                                                                                  isinstance(q.w_scale, tuple))))


def integer_line(meta: dict[str, Any], form: str) -> str:
    """Whether iree-compile computed the quantized convolution on the integers: the element types its
    convolution dispatches are named with (..._conv_<sizes>_i8xi8xi32: int8 operands, int32 accumulator; ..._f32)."""
    fn = meta["function"]
    convs = [d.split("$async_")[-1] for d, _ in meta["dispatches"]
             if d.startswith((f"{fn}$", f"{fn}_")) and "_conv_" in d]
    kinds = {d.rsplit("_", 1)[-1] for d in convs}
    group = "the QDQ group" if form == "qdq" else "QLinearConv"
    if not convs:
        return f"# no convolution dispatch named: whether iree-compile computed {group} on the integers is not known"
    if all(all(t.startswith("i") for t in k.split("x")) for k in kinds):
        return f"# iree-compile turned {group} into an integer convolution ({', '.join(convs)})"
    return (f"# iree-compile did NOT turn {group} into an integer convolution: it runs in float on the dequantized "
            f"values ({', '.join(convs)}), then quantizes")


def host_cpu() -> str:
    """A digest of this CPU's model name and ISA flags (/proc/cpuinfo): `host` compiles for this CPU, so a
    module is reused only on a CPU like the one it was built on."""
    import hashlib
    import platform

    try:
        lines = Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    wanted = [ln for ln in lines if ln.startswith(("model name", "flags", "Features", "CPU part"))][:3]
    return hashlib.sha256("\n".join([platform.machine(), platform.processor(), *wanted]).encode()).hexdigest()[:16]


def dispatch_lines(meta: dict[str, Any], how: str) -> list[str]:
    """What iree-compile made of the model: passes, target, each dispatch's code generation pipeline."""
    fn = meta["function"]
    dispatches = [f"{d.split('$async_')[-1] if d.startswith(fn) else d}: {p}" for d, p in meta["dispatches"]
                  if d.startswith(f"{fn}$") or d.startswith(f"{fn}_")]
    return ["# passes: iree-import-onnx (torch-mlir ONNX importer) -> iree-compile input pipeline (ONNX -> torch -> "
            "linalg), global optimization, dispatch creation, stream, HAL, llvm-cpu code generation",
            f"# target cpu {meta.get('target_cpu') or '?'} ({', '.join(meta.get('features', [])) or 'no listed features'})",
            "# dispatches (code generation pipeline): " + ("; ".join(dispatches) or "none reported"),
            f"# module: {how}"]
