"""Reproducer templates for torch (and the torch-written mutants) and the fault:* test doubles.

See reports/repro/script.py for the script around them, reports/repro/registry.py for the registry.
"""

from __future__ import annotations

import textwrap

from backends.torch import epilogue as torch_epilogue
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import assign, constants, residual_names, vector_names
from reports.repro.registry import ReproUnavailable, register, stale


@register("torch")
def torch_template(rec: Record, case: Case) -> str:
    """The adapter's own lines (its translation) run on tensors made exactly as it made them."""
    if not rec.translation.strip():
        raise ReproUnavailable("the record has no translation (the call never happened)")
    body = textwrap.indent(rec.translation.strip(), " " * 8)
    return f'''
import torch
import torch.nn.functional as F


def run_framework(x, w, b):
    """The call convdiff's torch adapter made (recorded translation), on {rec.device}."""
    dt = getattr(torch, DTYPE)
    if DEVICE == "cuda":
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = TF32

    def t(a):  # values exact in DTYPE
        return torch.from_numpy(a).to(dt).to(DEVICE)

    x, w = t(x), t(w)  # x in the case layout
    b = None if b is None else t(b){_epilogue_tensors(rec, case)}
    with torch.no_grad():
{body}
    return y.detach().cpu().double().numpy(), str(y.dtype).removeprefix("torch.")
'''


def _epilogue_tensors(rec: Record, case: Case) -> str:
    """The epilogue's buffers and residuals (NC*) under the names the recorded lines use."""
    if not case.epilogue:
        return ""
    recorded = rec.translation.splitlines()
    if not all(ln in recorded for ln in torch_epilogue.lines(case, constants(case))):
        if rec.backend.startswith("mutant:"):
            raise ReproUnavailable(f"{rec.backend} does not apply this case's epilogue as torch writes it (the "
                                   "test double rewrites it); its translation shows what it ran")
        raise stale(rec)
    nc = ".movedim(-1, 1)" if case.channels_last else ""
    lines = ["# the epilogue's constants (per-channel buffers) and residuals (NC*), as the adapter made them",
             *assign(vector_names(case), "t({})"), *assign(residual_names(case), "t({})" + nc)]
    return textwrap.indent("\n" + "\n".join(lines), " " * 4)


@register("fault")
def fault_template(rec: Record, case: Case) -> str:
    """Test double: the reference rounded to the dtype, then the injected fault (NumPy only)."""
    mode = rec.backend.partition(":")[2]
    inject = {"nan": "out.reshape(-1)[0] = np.nan",
              "wrong_shape": "out = np.concatenate([out, out[..., -1:]], axis=-1)"}.get(mode)
    if inject is None:
        raise ReproUnavailable(f"fault:{mode} kills or stalls the process; there is nothing to compare")
    epi = ("\n    out = np.ascontiguousarray(round_to_dtype(ref))  # with the epilogue: the oracle's whole output"
           if case.epilogue else "")
    return f'''

def run_framework(x, w, b):
    """convdiff's fault:{mode} test double: the exact answer in DTYPE, then the injected fault."""
    xf = np.moveaxis(x, -1, 1) if LAYOUT == "channels_last" else x
    out = reference(xf, w, b)
    out = np.ascontiguousarray(round_to_dtype(np.moveaxis(out, 1, -1) if LAYOUT == "channels_last" else out)){epi}
    {inject}
    return out, DTYPE
'''
