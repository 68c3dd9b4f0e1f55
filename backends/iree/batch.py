"""Many cases compiled as one IREE module: one iree-compile run, one function per case.

iree-compile pays about 1.5 s a run before any work on a busy 2-core host, and then about 0.7 s per
convolution (measured 2026-11-28, iree 3.13.0, 2-core Xeon: 1 conv 2.2 s, 10 convs 8.4 s in one
module). prepare() therefore imports the uncached cases of a share `batch_size` at a time into one
module, each graph as a function named after its cache key (iree-import-onnx's importer uniquifies the
weights' resource names), compiles it once, and stores the module (`iree-batch/<batch key>`) and per case
an entry naming that module and function (`iree/<key>/meta.json`). run() then finds its key and calls
its function there: the same ONNX graph, the same flags, only compiled beside others. A batch that
fails to compile is split in halves until the failing case stands alone; that one is left to run()'s
own build, so its refusal is recorded exactly as without batching. Quantized cases are batched like float ones
(their QDQ or QLinearConv graphs, their scales as uniquely named resources). Where iree-compile's errors point at lines
of the input (`<stdin>:line:col: error:`), the functions holding those lines are left out at once and
the rest compiled again, without halving.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import Any, Protocol

from backends.artifacts import ArtifactCache
from backends.base import given_inputs
from backends.iree.compile import CompileFailed, compile_mlir, functions_at, import_models
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class Batchable(Protocol):
    """What prepare() uses of the backend (backends/iree/backend.py IreeBackend)."""

    cache: ArtifactCache
    batch_size: int

    def supports(self, case: Case, device: str) -> str | None: ...
    def epilogue_reason(self, case: Case) -> str | None: ...
    def key(self, case: Case, inputs: Any) -> str: ...
    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]: ...
    def model(self, case: Case, inputs: Any, attrs: dict[str, Any]) -> Any: ...


def prepare(backend: Batchable, cases: list[Case], device: str, inputs: list[Inputs] | None = None) -> dict[str, int]:
    """Compile the share's uncached cases (with `inputs`, else their own) in batches; counts for the worker's log."""
    if backend.cache.root is None or os.environ.get("CONVDIFF_CACHE_WRITE", "").lower() == "second":
        return {"batched": 0}  # no cache to put them in, or configurations that will not come back (fuzz)
    todo: list[tuple[str, Any]] = []
    for case, data in given_inputs(cases, inputs):
        if case.geometry is None or backend.supports(case, device) or backend.epilogue_reason(case):
            continue
        # a refused model, a quantized case qmodel cannot state (its per-channel scales) or a remembered crash:
        # run() answers it
        with contextlib.suppress(Exception):
            key = backend.key(case, data)
            if backend.cache.load(key) is None:
                attrs, _, _ = backend.plan(case)
                todo.append((key, backend.model(case, data, attrs)))
    size = max(backend.batch_size, 1)
    done = sum(compile_batch(backend.cache, todo[i:i + size]) for i in range(0, len(todo), size))
    return {"to_build": len(todo), "batched": done}


def compile_batch(cache: ArtifactCache, entries: list[tuple[str, Any]]) -> int:
    """Compile (key, ONNX model) pairs as one module and store it; on failure, halves. Cases stored."""
    if len(entries) < 2:
        return 0  # alone: run() builds it as one case, recording its own refusal
    names = {key: f"c{key[:24]}" for key, _ in entries}
    asm = ""
    try:
        asm = import_models([(names[key], model) for key, model in entries])
        compiled = compile_mlir(asm)
    except CompileFailed as exc:
        # the functions its errors point at are left out (run() builds and records them), the rest tried again;
        # where no error names a function (a crash, a verifier error without a location), halves
        bad = functions_at(asm, exc.lines) if asm else set()
        if bad:
            return compile_batch(cache, [(key, model) for key, model in entries if names[key] not in bad])
        half = len(entries) // 2
        return compile_batch(cache, entries[:half]) + compile_batch(cache, entries[half:])
    batch_key = hashlib.sha256("".join(sorted(names)).encode()).hexdigest()[:32]
    ArtifactCache("iree-batch").store(batch_key, {"module.vmfb": compiled.vmfb})
    for key, name in names.items():
        meta = {"function": name, "batch": batch_key, "target_cpu": compiled.target_cpu,
                "features": compiled.features,
                "dispatches": [(d, p) for d, p in compiled.dispatches if d.startswith((f"{name}$", f"{name}_"))]}
        cache.store(key, {"meta.json": json.dumps(meta).encode()})
    return len(entries)
