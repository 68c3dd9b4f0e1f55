"""IREE on the CPU: the hand-built ONNX model (backends/onnx/model.py) imported with iree-import-onnx,
compiled by iree-compile for llvm-cpu with the host CPU as target, and run by the IREE runtime.

`iree` reads the same checked model onnxruntime and openvino run (the Conv / ConvTranspose node with
pads, strides, dilations, group, output_padding, auto_pad; channels_last as Transpose nodes around it;
the epilogue as ONNX nodes after it), so the three steps are those of a user deploying an ONNX model
with IREE: backends/iree/compile.py imports and compiles, backends/iree/runtime.py runs. The
translation names the flags and, from iree-compile's configured executables, each dispatch and the
code generation pipeline it got, and the CPU `host` resolved to.

Refusals: the importer's or iree-compile's first error line (an MLIR verifier message, "failed to
legalize operation ...") is `rejected`, and so is an iree-compile that dies by a signal ("iree-compile
crashed (SIGABRT): <its assertion>"): the compiler is a child process, the worker survives it.

Cost (backends/artifacts.py): the .vmfb is cached under a key over the case (without its seed, with the
digest of the weights the model bakes in), the IREE and onnx versions, the target flags, the host CPU
(cpu model and ISA flags: `host` compiles for this CPU) and the sources that write the model; a refusal
is cached as its message. A warm run imports and compiles nothing. prepare() compiles many cases as
the functions of one module (backends/iree/batch.py).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Backend, Capabilities, HostFact, Output, Rejected, Unsupported, first_line
from backends.iree import batch
from backends.iree.compile import TARGET_FLAGS, CompileFailed, compile_mlir, import_models, versions
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
from harness.model.case import Case
from harness.numerics.inputs import Inputs

SOURCES = ("iree/backend.py", "iree/compile.py", "onnx/model.py", "pads.py")
FUNCTION = "main"  # the graph's name, hence the function's, in a module of one case
DTYPES = ("float32", "float16", "float64", "bfloat16")


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
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same (auto_pad SAME_UPPER)", "valid (auto_pad VALID)"),
        layouts=("channels_first", "channels_last: Transpose nodes around the node (exact permutation)"),
        dtypes=("float32", "float16", "float64", "bfloat16 (opset 22 model)"),
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

    def setup(self, device: str) -> None:
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
        if case.dtype == "bfloat16":
            return None  # an opset-22 model (backends/onnx/model.py BFLOAT16_OPSET)
        return dtype_reason(case)

    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]:
        """The node's attributes, the translation lines and the notes (pure: shared with the repro script)."""
        attrs, notes = node_attributes(case)
        lines, notes = node_lines(case, attrs, notes)
        lines += ["onnx.checker.check_model(model); onnx.save(model, 'model.onnx')",
                  "iree-import-onnx model.onnx -o model.mlir",
                  "iree-compile model.mlir " + " ".join(TARGET_FLAGS) + " -o model.vmfb",
                  f"y = iree.runtime.load_vm_flatbuffer_file('model.vmfb', driver={DRIVER!r}).{FUNCTION}(x).to_host()"]
        return attrs, lines, notes

    def key(self, case: Case, inputs: Inputs) -> str:
        return case_key(case, inputs, self.salt)

    def model(self, case: Case, inputs: Inputs, attrs: dict[str, Any]) -> Any:
        try:
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
        if isinstance(files, str):
            raise Rejected(files)
        meta = json.loads(files["meta.json"])
        if "batch" in meta:  # compiled with other cases (backends/iree/batch.py): the batch's module
            batch = ArtifactCache("iree-batch").load(meta["batch"])
            if not isinstance(batch, dict):
                raise FileNotFoundError(f"the batch module {meta['batch'][:12]} of this case is gone from the cache")
            return meta["batch"], batch["module.vmfb"], meta, how
        return key, files["module.vmfb"], meta, how

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if case.quantized:
            raise Unsupported("iree: quantized cases are not built (float cases only)")
        attrs, lines, notes = self.plan(case)
        self.model(case, inputs, attrs)  # onnx.checker's verdict before any cache: a refused model is Rejected
        name, vmfb, meta, how = self.entry(case, inputs, attrs)
        try:
            fn = self.modules.function(name, vmfb, meta["function"])
            y = call(fn, (inputs.x, *residual_arrays(case, inputs)))
        except Exception as exc:  # noqa: BLE001 - the runtime refused the module or the call: a finding
            raise Rejected(first_line(exc)) from None
        lines += dispatch_lines(meta, how)
        return Output(y, str(y.dtype), "\n".join(lines), notes=notes)

    def prepare(self, cases: list[Case], device: str) -> dict[str, int]:
        return batch.prepare(self, cases, device)


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
