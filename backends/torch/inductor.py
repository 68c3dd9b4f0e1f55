"""torch-inductor: the conv and its epilogue as one nn.Module compiled by `torch.compile` (inductor),
the way a PyTorch model is deployed for inference.

The module is backends/torch/module.py's (the torch backend's identities: F.pad before an
asymmetric conv, a slice after an asymmetric transpose, movedim for channels_last), with the
epilogue applied by backends/torch/epilogue.py inside its forward: weight, bias and per-channel
epilogue constants are parameters/buffers, each residual an input after x (so it is not folded).
It is compiled with `torch.compile(model, backend="inductor", fullgraph=True)` and called under
`torch.no_grad()` with `torch._inductor.config.freezing = True`, the inference setting in which
inductor constant-folds the parameters and buffers (e.g. a conv followed by constants) and prepacks
weights. fullgraph=True makes a graph break an error, and a call that did not compile a graph is refused,
not passed as eager. The worker keeps the last compiled module: a run whose module is the same (the same
parameters and baked arrays, inputs of the same shape but for the batch: a relation's repeat, its other batch
sizes and single rows, a scaled input) calls it again with its own inputs, as a deployed model is compiled once
and called many times; any other run resets dynamo first and compiles its own, so no case meets dynamo's
recompile limit. Called at a second batch size, the kept module is recompiled by dynamo itself, as torch.compile
does for every user by default (automatic dynamic shapes): a graph whose batch is symbolic, which serves every
further size but 1; so the batch relation compares the rows of that graph's output with the case's own static
graph, the pair a model compiled once and called at several batch sizes runs, and costs one compile where a
fresh one per size took three (the batches of 3 and 7, then the single rows).

Inductor's caches live under `$CONVDIFF_CACHE/inductor` (default `.convdiff-cache/inductor`); the
FX graph cache is keyed by torch itself, and serves the graphs with oneDNN-prepacked weights too
(backends/torch/inductor_cache.py: torch refuses them, for a pickling frozen weights never reach).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from backends.artifacts import cache_base, case_key
from backends.base import Backend, Capabilities, HostFact, Output, Rejected, first_line
from backends.torch import epilogue as torch_epilogue
from backends.torch import inductor_cache
from backends.torch.eager import TORCH_TEMPLATE, TorchBackend
from backends.torch.module import conv_module, epilogue_lines, module_plan, to_tensor
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs

KEEP_ENV = "CONVDIFF_INDUCTOR_KEEP"


def cache_dir(isa: str) -> Path | None:
    """Where inductor keeps its caches, or None when CONVDIFF_CACHE switches caching off.

    One directory per ISA setting (`isa`: ATen's CPU capability, inductor's vector ISA, oneDNN's cap):
    inductor's FX graph cache key leaves out the vector ISA, so a hit returns C++ source generated for
    another vector width, which is then compiled for the current one. Measured on the smoke tier: a
    cache written under AVX-512 (16 floats per loop step) read under ATEN_CPU_CAPABILITY=avx2 (8-lane
    vectors): 10 of 90 results wrong, up to 1e36 and NaN (half of each step never written); one written
    under avx2 read under ATEN_CPU_CAPABILITY=default (scalar build): 18 of 90 "CppCompileError: 'at::vec'
    has not been declared". A fresh cache per setting: 0. cases/upstream/inductor-fx-cache-ignores-aten-capability.py."""
    base = cache_base()
    return None if base is None else (base / "inductor" / isa).resolve()


def isa_setting(torch: Any) -> str:
    """ATen's CPU capability and inductor's vector ISA as torch decided them, and the oneDNN cap the
    process was given: a cache written under one vector ISA and read under another is the bug above."""
    onednn = os.environ.get("ONEDNN_MAX_CPU_ISA", "") or os.environ.get("DNNL_MAX_CPU_ISA", "") or "default"
    aten = torch.backends.cpu.get_cpu_capability()
    return f"aten-{aten}-vec-{vec_isa()}-onednn-{onednn}".lower().replace("/", "_").replace(" ", "_")


def vec_isa() -> str:
    """The vector ISA inductor generates and compiles C++ for (pick_vec_isa: follows the CPU's flags and
    ATEN_CPU_CAPABILITY): amx, avx512, avx2, neon, ...; "none" where it emits scalar code."""
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    isa = pick_vec_isa()
    return type(isa).__name__.removeprefix("Vec").lower() if isa else "none"


class TorchInductorBackend(TorchBackend):
    """torch.nn module with the epilogue -> torch.compile(backend="inductor", fullgraph=True), frozen."""
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "torch-inductor"
    framework = "torch"
    # dynamo and inductor's compiler (2 s of CPU a worker): imported before the fork; nothing in them reads
    # TORCHINDUCTOR_CACHE_DIR at import (setup() sets it, inductor reads it at each use). Then inductor's
    # choice of vector ISA (0.8 s: it builds a probe program per ISA; cached for the process, decided by the
    # CPU and ATEN_CPU_CAPABILITY, which the zygote's key holds), which setup() and every compile ask for.
    # Last, the digest of torch's own source that keys inductor's caches (0.2 s; cached for the process, a
    # function of the installed files only), which every process's first compile computes otherwise.
    preload = (*TORCH_TEMPLATE, "torch._dynamo", "torch._inductor.compile_fx", "torch._inductor.cpu_vec_isa:pick_vec_isa",
               "torch._inductor.codecache:torch_key")
    gradient_preload = ()  # dynamo imports symbolic_shapes itself: TORCH_TEMPLATE heads preload in every run
    devices = ("cpu", "cuda")
    epilogue_ops = EPILOGUE_OPS
    capabilities = Capabilities(
        padding=("symmetric", "same (conv, stride 1)", "valid (conv)"),
        padding_identities=("asymmetric conv: F.pad in forward, then VALID", "same with stride > 1: explicit pads",
                            "asymmetric transpose: symmetric then slice in forward"),
        layouts=("channels_first", "channels_last: movedim in forward (exact permutation)"),
        gradients="none",
        unbatched=True, torch_same=True,  # the module takes them as torch does: compiled as given
    )

    def setup(self, device: str) -> None:
        super().setup(device)
        import torch

        # the kernel variant (torch.backends.mkldnn.enabled = False, set by TorchBackend.setup) changes what
        # inductor generates (no oneDNN fusion, prepacking or channels-last), which its cache key leaves out
        root = cache_dir(isa_setting(torch) + ("-mkldnn-off" if self.mkldnn_off else ""))
        if root is not None:  # read by inductor when it first compiles
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root)
        import torch._dynamo
        import torch._inductor.config

        self.dynamo = torch._dynamo
        self.inductor_config = torch._inductor.config
        self.last: tuple[str, Any] | None = None  # (module_key, the compiled module) of the last run that compiled
        self.keep = os.environ.get(KEEP_ENV, "1") != "0"  # 0: compile every run anew (bench/inductor_keep.py's baseline)
        if root is None:
            self.inductor_config.fx_graph_cache = False
        else:  # the graphs holding oneDNN-prepacked weights too (backends/torch/inductor_cache.py)
            inductor_cache.serve_prepacked_weights()

    def fingerprint(self, device: str) -> dict[str, str]:
        return {**super().fingerprint(device), "freezing": "True"}

    def host_facts(self, device: str) -> dict[str, HostFact]:
        return {**super().host_facts(device), "inductor_vec_isa": vec_isa(),
                "inductor_cache": "off" if cache_base() is None else "per-isa"}

    def translation(self, case: Case, inputs: Inputs, cls: str, args: dict[str, Any], body: list[str]) -> list[str]:
        """The module, its forward and the compile call as a user writes them."""
        names = list(torch_epilogue.residuals(case, inputs.epilogue))
        buffers = [f"{k}: {tuple(v.shape)}" for k, v in torch_epilogue.buffers(case, inputs.epilogue).items()]
        if case.epilogue and inputs.epilogue:  # on NC*, before the channels_last movedim back (invalid cases: none drawn)
            tail = body[-1:] if case.channels_last else []
            body = [*body[:len(body) - len(tail)], *epilogue_lines(case, inputs.epilogue), *tail]
        args_code = ", ".join(["x", *names])
        return [f"m = torch.nn.{cls}(" + ", ".join(f"{k}={v!r}" for k, v in args.items())
                + f", dtype=torch.{case.dtype})  # weight/bias = case inputs",
                *([f"buffers (case constants): {', '.join(buffers)}"] if buffers else []),
                f"forward({args_code}): " + "; ".join(body),
                "torch._inductor.config.freezing = True",
                'cmodel = torch.compile(model.eval(), backend="inductor", fullgraph=True)',
                f"with torch.no_grad(): y = cmodel({args_code})"]

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        torch = self.torch
        cls, args, pre_pad, crop, body, notes = module_plan(case)
        lines = self.translation(case, inputs, cls, args, body)
        args_in = [to_tensor(a).to(device) for a in (inputs.x, *torch_epilogue.residuals(case, inputs.epilogue).values())]
        key = module_key(case, inputs, device, [tuple(a.shape) for a in args_in])
        compiled = self.last[1] if self.keep and self.last is not None and self.last[0] == key else None
        stats = self.dynamo.utils.counters["stats"]
        before = stats["unique_graphs"]
        try:
            if compiled is None:
                self.last = None
                self.dynamo.reset()  # a fresh compile: never dynamo's recompile limit or automatic dynamic shapes
                model = conv_module(case, inputs, cls, args, pre_pad, crop, epilogue=True).to(device)
                compiled = torch.compile(model, backend="inductor", fullgraph=True)
            with torch.no_grad(), self.inductor_config.patch(freezing=True):
                y = compiled(*args_in)
        except Exception as exc:  # noqa: BLE001 - dynamo or inductor raised on a valid case: a finding
            self.last = None
            self.dynamo.reset()
            raise Rejected(rejection(exc)) from None
        graphs = stats["unique_graphs"] - before
        if self.last is None and graphs < 1:  # dynamo fell back to eager: what ran is not inductor's code
            self.dynamo.reset()
            raise Rejected("torch.compile compiled no graph (dynamo ran the module eagerly)")
        self.last = (key, compiled)
        arr, dtype = self.to_numpy(y)
        tf32 = device == "cuda" and case.dtype == "float32" and bool(torch.backends.cudnn.allow_tf32)
        return Output(arr, dtype, "\n".join(lines), tf32=tf32, notes=notes)

    run_gradients = Backend.run_gradients  # not TorchBackend's eager autograd: no compiled backward here


def module_key(case: Case, inputs: Inputs, device: str, shapes: list[tuple[int, ...]]) -> str:
    """What the compiled module is: the case's parameters but its seed, batch, gradients and tags, the arrays the
    module holds (w, b, the epilogue's constants), the shapes of its call's inputs (x and residuals) but their
    batch axis, and the case the run derives from (`id@relation-run`): dynamo recompiles a module called at
    another batch size, which only a case's own relation runs do; another case is judged on its own graph."""
    plain = dataclasses.replace(case, gradients=False, tags=(), batch=1)
    per_row = [s if case.unbatched else s[1:] for s in shapes]
    return case_key(plain, inputs, {"device": device, "shapes": per_row, "case": case.id.split("@")[0]})


def rejection(exc: BaseException) -> str:
    """The exception's first line; for dynamo's BackendCompilerFailed (whose first line only says
    "backend='inductor' raised:"), the first line of the exception inductor raised."""
    inner = getattr(exc, "inner_exception", None)
    return f"{type(exc).__name__}: {first_line(inner)}" if isinstance(inner, BaseException) else first_line(exc)
