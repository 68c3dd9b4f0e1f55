"""Reproducer template for torch-inductor (see reports/repro/script.py for the script around it).

What backends/torch/inductor.py does, written out: the module of backends/torch/module.py (the torch
backend's identities; the epilogue in forward, its per-channel constants buffers, each residual an
input after x) compiled by `torch.compile(backend="inductor", fullgraph=True)` after a dynamo reset,
and called under `torch.no_grad()` with `torch._inductor.config.freezing = True` (constant folding of
the parameters and buffers, weight prepacking). The script gives inductor a fresh cache directory of
its own for the compile (removed after it) unless TORCHINDUCTOR_CACHE_DIR is set: inductor's FX graph
cache ignores the vector ISA (cases/upstream/inductor-fx-cache-ignores-aten-capability.py), so a
reproducer never reads code generated for another one. The recorded translation must be the one the adapter writes now.
"""

from __future__ import annotations

from backends.torch.inductor import TorchInductorBackend
from backends.torch.module import module_plan
from harness.execution.records import Record
from harness.model.case import Case
from harness.numerics.inputs import make_inputs
from reports.repro.registry import register, require_lines
from reports.repro.torch_module import model_class_source, module_inputs


@register("torch-inductor")
def torch_inductor_template(rec: Record, case: Case) -> str:
    """The module compiled by inductor with freezing, under no_grad, as the adapter compiles it."""
    cls, args, pre_pad, crop, body, notes = module_plan(case)
    require_lines(rec, TorchInductorBackend().translation(case, make_inputs(case), cls, args, body))
    made, call = module_inputs(case)
    model = model_class_source(case, "torch-inductor", cls, args, pre_pad, crop)
    identities = "".join(f"# exact identity: {n}\n" for n in notes)
    return f'''
import os
import shutil
import tempfile

import torch
import torch._dynamo
import torch._inductor.config
import torch.nn.functional as F


{identities}{model}

def run_framework(x, w, b):
    """torch.compile(backend="inductor", fullgraph=True), frozen, under no_grad, on {rec.device}."""
    if DEVICE == "cuda":
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = TF32

    def t(a):  # exact: the values are DTYPE values
        return torch.from_numpy(a).to(getattr(torch, DTYPE))

    model = {made}.eval().to(DEVICE)
    # a cache of its own, unless one is set: inductor's FX graph cache ignores the vector ISA, so a cache
    # written under another one would hand back code generated for it
    fresh = "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    if fresh:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="repro-inductor-")
    try:
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="inductor", fullgraph=True)
        with torch.no_grad(), torch._inductor.config.patch(freezing=True):
            y = compiled(*(a.to(DEVICE) for a in ({call},)))
    finally:
        if fresh:
            shutil.rmtree(os.environ.pop("TORCHINDUCTOR_CACHE_DIR"), ignore_errors=True)
    return y.detach().cpu().double().numpy(), str(y.dtype).removeprefix("torch.")
'''
