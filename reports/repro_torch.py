"""Reproducer templates for torch (and the torch-written mutants) and the fault:* test doubles.

See reports/repro.py for the script around them, reports/repro_registry.py for the registry.
"""

from __future__ import annotations

import textwrap

from harness.execution.records import Record
from harness.model.case import Case
from reports.repro_registry import ReproUnavailable, register


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
    x = torch.from_numpy(x).to(dt).to(DEVICE)  # x in the case layout; values exact in DTYPE
    w = torch.from_numpy(w).to(dt).to(DEVICE)
    b = None if b is None else torch.from_numpy(b).to(dt).to(DEVICE)
    with torch.no_grad():
{body}
    return y.detach().cpu().double().numpy(), str(y.dtype).removeprefix("torch.")
'''


@register("fault")
def fault_template(rec: Record, case: Case) -> str:
    """Test double: the reference rounded to the dtype, then the injected fault (NumPy only)."""
    mode = rec.backend.partition(":")[2]
    inject = {"nan": "out.reshape(-1)[0] = np.nan",
              "wrong_shape": "out = np.concatenate([out, out[..., -1:]], axis=-1)"}.get(mode)
    if inject is None:
        raise ReproUnavailable(f"fault:{mode} kills or stalls the process; there is nothing to compare")
    return f'''

def run_framework(x, w, b):
    """convdiff's fault:{mode} test double: the exact answer in DTYPE, then the injected fault."""
    xf = np.moveaxis(x, -1, 1) if LAYOUT == "channels_last" else x
    out = reference(xf, w, b)
    out = np.ascontiguousarray(round_to_dtype(np.moveaxis(out, 1, -1) if LAYOUT == "channels_last" else out))
    {inject}
    return out, DTYPE
'''
