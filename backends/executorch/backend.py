"""executorch and executorch-portable: a case's module exported, lowered to an ExecuTorch program and run by
ExecuTorch's Python runtime (program.py says how the program is made, runtime.py how it runs).

- `executorch`: lowered with `XnnpackPartitioner()`; what XNNPACK takes runs in its delegate, the rest on the
  runtime's CPU kernels. Quantized (uint8/int8) cases: PT2E with XNNPACKQuantizer (quant.py).
- `executorch-portable`: lowered without a partitioner: every op on the runtime's CPU kernels. In the pip wheel
  those are the `optimized_native_cpu_ops` library: the portable kernels (convolution among them) with the
  optimized library's versions of add, mul, div, sub, gelu and a few more. Quantized cases are beyond it: the
  wheel's runtime registers no quantized_decomposed kernel (`portable_lib._get_operator_names()` lists none;
  `to_executorch` of a PT2E program raises "Missing out variants: {'quantized_decomposed::quantize_per_tensor',
  ...}").

Every case records what was delegated in its translation (`lowered: XnnpackBackend: aten.convolution, ...;
runtime kernels: ...`).

What neither path can run (declared, `supports`): a 3-D convolution, conv3d or conv_transpose3d. XNNPACK's
partitioner takes 1-D and 2-D convolutions only (partition/config/gemm_configs.py ConvolutionConfig:
"Only support 1D + 2D Conv"), and the runtime's convolution kernel refuses a 5-D input on every shape
(kernels/portable/cpu/util/kernel_ops_util.cpp check_convolution_args: "Expect input tensor to be 3-D or 4-D";
measured: execute fails with error 0x12, InvalidArgument). tests/test_executorch.py checks the refusal live.

Cost: a program per case (`builds_per_case`), cached by backends/artifacts.py under `executorch` and
`executorch-portable`, keyed by the case, its baked arrays, the executorch, torch and torchao versions, the
partitioner and the digest of the sources that write the program: a warm run exports and lowers nothing.
`prepare` lowers uncached float cases many to a program (batch.py).
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Backend, Capabilities, HostFact, Output, Rejected, Unsupported, first_line, given_inputs
from backends.executorch import batch, program, quant, runtime
from backends.executorch.batch import Batches, a_to_tensor, member_arrays
from backends.torch.eager import TORCH_TEMPLATE, invalid_padding_reason
from harness.model.case import EPILOGUE_OPS, FLOAT_DTYPES, Case
from harness.numerics.inputs import Inputs

# what writes a program (backend.py and runtime.py run them; batch.py stores them, its layout in the salt: FORMAT)
SOURCES = ("executorch/program.py", "executorch/quant.py",
           "torch/module.py", "torch/epilogue.py", "torch/eager.py", "torch/pt2e_quantizer.py")
RANK3_REASON = ("ExecuTorch runs no 3-D convolution: XNNPACK's partitioner takes 1-D and 2-D convolutions only "
                "(ConvolutionConfig: 'Only support 1D + 2D Conv'), and the runtime's convolution kernel refuses a "
                "5-D input on every shape (kernel_ops_util.cpp check_convolution_args: 'Expect input tensor to be "
                "3-D or 4-D'; execute fails with error 0x12)")
PORTABLE_QUANT_REASON = ("executorch-portable has no quantized path: the runtime in the executorch wheel registers "
                         "no quantized_decomposed kernel (to_executorch of a PT2E program raises 'Missing out "
                         "variants: quantize_per_tensor, dequantize_per_tensor'); int8 runs through XNNPACK "
                         "(backend executorch)")
PADDING = ("symmetric", "same (conv, stride 1)", "valid (conv)")
IDENTITIES = ("asymmetric conv: F.pad in forward, then VALID", "same with stride > 1: explicit pads",
              "asymmetric transpose: symmetric then slice in forward")
OPS_2D = ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d")
# the zygote's imports: torch's template first (so it forks from torch's), then lowering, the runtime, quantizer.
# No warm-up lowering there, though a process's first XNNPACK lowering costs ~4 CPU seconds more than the next:
# lowering starts threads (measured 2026-11-28: 5 in the process after one, 3 before), and a worker forked from
# such a zygote hangs in a futex wait as soon as the runtime's portable conv runs a 64x32x32 case.
PRELOAD = (*TORCH_TEMPLATE, "executorch.exir", "executorch.runtime",
           "executorch.backends.xnnpack.partition.xnnpack_partitioner",
           "executorch.backends.xnnpack.quantizer.xnnpack_quantizer", "torchao.quantization.pt2e.quantize_pt2e")


def version_of(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def executed(call: Callable[[], Any]) -> Any:
    """The runtime's result; its refusal to load or execute a program is the case's rejection."""
    try:
        return call()
    except runtime.RuntimeFailure as exc:
        raise Rejected(str(exc)) from None


class ExecutorchBase(Backend):
    framework = "executorch"
    distribution = "executorch"
    preload = PRELOAD
    devices = ("cpu",)
    epilogue_ops = EPILOGUE_OPS
    builds_per_case = True  # a program per case (run --compiled-sample)
    batch_size = 32  # float cases per batched program (prepare, batch.py)
    delegate = False
    kind = ""  # the artefact cache's kind (backends/artifacts.py)

    def unavailable_reason(self) -> str | None:
        import importlib.util

        for module in ("torch", "executorch"):
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed (pip install 'convdiff[executorch]')"
        return None

    threads: int | None = None  # set_threads: the runtime's threadpool (XNNPACK's delegate runs on it)

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return runtime.threads()

    def setup(self, device: str) -> None:
        import torch
        from executorch.runtime import Runtime

        self.torch = torch
        self.runtime = Runtime.get()
        if self.threads:
            from executorch.extension.pybindings import portable_lib

            portable_lib._unsafe_reset_threadpool(self.threads)
        self.cache = ArtifactCache(self.kind)
        self.batches = Batches(self.cache, self.kind, self.delegate)
        self.salt = {"executorch": version_of("executorch"), "torch": str(torch.__version__),
                     "torchao": version_of("torchao"), "delegate": self.delegate, "batch_format": batch.FORMAT,
                     "sources": sources_digest(SOURCES)}

    def version(self) -> str:
        return version_of("executorch") if version_of("executorch") != "none" else "unknown"

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": self.version(), "torch": str(self.torch.__version__),
                "partitioner": program.DELEGATE if self.delegate else "none"}

    def supports(self, case: Case, device: str) -> str | None:
        if case.rank == 3:
            return RANK3_REASON
        return invalid_padding_reason(case)

    # --- building -----------------------------------------------------------------
    def _alone(self, case: Case, inputs: Inputs, key: str) -> dict[str, bytes]:
        """The case's program built alone (or its cached refusal, raised as Rejected)."""
        files, _ = self.cache.fetch(key, lambda: self.build(case, inputs), self.refusal)
        if isinstance(files, str):
            raise Rejected(files)
        return files

    def build(self, case: Case, inputs: Inputs) -> dict[str, bytes]:
        if case.quantized:
            model, example, _, _ = quant.quantized_module(case, inputs)
            pte, lowered = program.export_and_lower(model, example, self.delegate)
            return {"program.pte": pte, "delegation.txt": lowered[0].encode()}
        return program.build(case, inputs, self.delegate)

    @staticmethod
    def refusal(exc: Exception) -> str:
        if isinstance(exc, Unsupported):  # not a refusal: raised again on the next run, never cached as one
            raise exc
        if isinstance(exc, Rejected):
            return str(exc)
        cause = exc.__cause__  # ExecuTorch's pass manager wraps a pass's exception in one that names only the pass
        return first_line(exc) + (f" (caused by {first_line(cause)})" if cause is not None else "")

    def prepare(self, cases: list[Case], device: str, inputs: list[Inputs] | None = None) -> dict[str, int]:
        """Lower the uncached float cases `batch_size` to a program (batch.py)."""
        if self.cache.root is None:
            return {"batched": 0}
        todo = []
        for case, data in given_inputs(cases, inputs):
            if case.geometry is None or case.quantized or self.epilogue_reason(case) or self.supports(case, device):
                continue
            key = case_key(case, data, self.salt)
            try:
                if self.cache.load(key) is None:
                    todo.append((key, case, data))
            except Exception:  # noqa: BLE001 - remembered crash: run() reports it
                continue
        return {"to_build": len(todo), "batched": self.batches.build(todo, self.batch_size)}

    # --- running ------------------------------------------------------------------
    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        reason = self.epilogue_reason(case) or self.supports(case, device)
        if reason:
            raise Unsupported(reason)
        arrays, notes, lines = self.program_inputs(case, inputs)
        key = case_key(case, inputs, self.salt)
        files = self.cache.load(key)  # RememberedCrash: building it killed a worker before
        y = None
        if isinstance(files, dict) and "member.json" in files:  # lowered in a batch (prepare)
            doc = json.loads(files["member.json"])
            y = executed(lambda: self.batches.run(doc, arrays))
            if y is None:  # the batch is gone or crashed: this case alone, under a key of its own
                files, key = None, case_key(case, inputs, {**self.salt, "alone": True})
            else:  # said in the `lowered:` line: not an identity of the case's translation, how it was built
                delegated = (f"{doc['delegation']} [member {doc['index']} of {doc['members']} side-by-side cases "
                             "lowered as one program (no op joins them), run with the others' inputs zero]")
        if y is None:
            built = files if isinstance(files, dict) else self._alone(case, inputs, key)
            delegated = built["delegation.txt"].decode()
            y = executed(lambda: runtime.Loaded(built["program.pte"]).run([a_to_tensor(a) for a in arrays])[0])
        arr, dtype = self.to_numpy(case, y, inputs)
        tail = (program.quant_lines(delegated) if case.quantized
                else program.program_lines(case, inputs, self.delegate, delegated))
        return Output(arr, dtype, "\n".join([*lines, *tail]), notes=notes)

    def program_inputs(self, case: Case, inputs: Inputs) -> tuple[list[np.ndarray], list[str], list[str]]:
        """(the program's input arrays, notes, the module's (and quantization's) lines)."""
        if case.quantized:
            reason = quant.reason(case)
            if reason:
                raise Unsupported(reason)
            twin, finputs = quant.float_inputs(case, inputs)
            lines, notes = program.described(twin, finputs)
            assert inputs.quant is not None
            return [finputs.x], [*notes, *quant.quant_notes(case)], [*lines, *quant.flow_lines(case, inputs.quant)]
        lines, notes = program.described(case, inputs)
        return member_arrays(case, inputs), notes, lines

    def to_numpy(self, case: Case, y: Any, inputs: Inputs) -> tuple[np.ndarray, str]:
        torch = self.torch
        assert isinstance(y, torch.Tensor)
        name = str(y.dtype).removeprefix("torch.")
        if case.quantized:
            assert inputs.quant is not None
            return quant.to_integers(case, y.numpy(), inputs.quant), case.dtype
        t = y.contiguous()
        if t.dtype == torch.bfloat16:
            import ml_dtypes

            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16), name
        return t.numpy(), name


class ExecutorchBackend(ExecutorchBase):
    """torch.export -> to_edge_transform_and_lower(partitioner=[XnnpackPartitioner()]) -> .pte -> runtime."""

    name = "executorch"
    kind = "executorch"
    delegate = True
    quantized = ("PT2E: torch.export, ExecuTorch's XNNPACKQuantizer with the case's pinned qparams (int8; uint8 "
                 "as int8 with zero points less 128), prepare_pt2e/convert_pt2e, lowered to XNNPACK")
    capabilities = Capabilities(
        ops=OPS_2D, padding=PADDING, padding_identities=IDENTITIES,
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
        dtypes=("float32 (XNNPACK)", "float16 (XNNPACK)", "float64 (not delegated: runtime kernels)",
                "bfloat16 (not delegated: runtime kernels)"),
        devices=("cpu",),
        unbatched=True, torch_same=True,  # the module takes them as torch does: exported and lowered as given
    )

    def setup(self, device: str) -> None:
        super().setup(device)
        probe = ArtifactCache("executorch-probe")
        files, _ = probe.fetch(f"f16-{self.salt['executorch']}-{self.salt['torch']}",
                               lambda: {"program.pte": runtime.f16_probe_program()}, first_line)
        self.f16 = runtime.f16_accumulation(files["program.pte"]) if isinstance(files, dict) else f"rejected ({files})"

    def host_facts(self, device: str) -> dict[str, HostFact]:
        return {"xnnpack_f16_accumulation": self.f16, "executorch_threads": runtime.threads()}


class ExecutorchPortableBackend(ExecutorchBase):
    """torch.export -> to_edge_transform_and_lower (no partitioner) -> .pte -> runtime's CPU kernels."""

    name = "executorch-portable"
    kind = "executorch-portable"
    delegate = False
    capabilities = Capabilities(
        ops=OPS_2D, padding=PADDING, padding_identities=IDENTITIES,
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
        dtypes=FLOAT_DTYPES, devices=("cpu",),
        unbatched=True, torch_same=True,  # the module takes them as torch does: exported and lowered as given
    )

    def epilogue_reason(self, case: Case) -> str | None:
        if case.quantized:
            return PORTABLE_QUANT_REASON
        return super().epilogue_reason(case)
