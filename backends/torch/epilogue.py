"""The epilogue in PyTorch, as a user writes it after a conv: written once for eager torch and for
the nn.Module that the compiled and exported paths take (torch-inductor, torch-onnx-ort,
tvm-torch-import).

`apply(case, y, tensors, constants)` works on y in NC* form (channels first, as nn modules and
F.batch_norm want it); per-channel constants are viewed as (1, C, 1, ...); scalars are Python
floats (exact: they are drawn in the case dtype). In a module, the constants are its buffers and
each residual an input after x, so a compiler sees constants it may fold and an input it may not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.model.case import CLAMP_RANGE, LEAKY_SLOPE, Case

ACTIVATIONS = {  # name -> the call as code (y is the argument)
    "relu": "F.relu(y)", "relu6": "F.relu6(y)", "leaky_relu": f"F.leaky_relu(y, {LEAKY_SLOPE})",
    "sigmoid": "torch.sigmoid(y)", "tanh": "torch.tanh(y)", "gelu": "F.gelu(y)", "hardswish": "F.hardswish(y)",
    "silu": "F.silu(y)", "clamp": f"torch.clamp(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})",
}
BN_KEYS = ("mean", "var", "gamma", "beta")


def buffers(case: Case, constants: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Buffer name -> array, for the per-channel constants (scalars are inlined as floats)."""
    out = {}
    for i, (name, consts) in enumerate(zip(case.epilogue, constants)):
        if name in ("scale", "divide", "shift"):
            out[f"{name}{i}"] = consts["c"]
        elif name == "batch_norm":
            out.update({f"bn{i}_{k}": consts[k] for k in BN_KEYS})
    return out


def residuals(case: Case, constants: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Input name -> array (case layout) for each residual, in epilogue order."""
    return {f"residual{i}": c["r"] for i, (name, c) in enumerate(zip(case.epilogue, constants)) if name == "residual"}


def _activation(name: str) -> Any:
    import torch
    import torch.nn.functional as F

    return {"relu": F.relu, "relu6": F.relu6, "leaky_relu": lambda t: F.leaky_relu(t, LEAKY_SLOPE),
            "sigmoid": torch.sigmoid, "tanh": torch.tanh, "gelu": F.gelu, "hardswish": F.hardswish,
            "silu": F.silu, "clamp": lambda t: torch.clamp(t, *CLAMP_RANGE)}[name]


def lines(case: Case, scalars: tuple[dict[str, np.ndarray], ...]) -> list[str]:
    """The lines `apply` runs, on y (NC*) with the buffers and residuals by name (pure: the reproducers
    and the module paths' translations print the same)."""
    code_view = ", ".join(map(str, (1, -1, *(1,) * case.rank)))
    out: list[str] = []
    for i, name in enumerate(case.epilogue):
        if name in ACTIVATIONS:
            out.append(f"y = {ACTIVATIONS[name]}")
        elif name == "residual":
            out.append(f"y = y + residual{i}  # an input of y's shape")
        elif name == "batch_norm":
            out.append(f"y = F.batch_norm(y, bn{i}_mean, bn{i}_var, bn{i}_gamma, bn{i}_beta, training=False, eps=1e-5)")
        elif name in ("mul_scalar", "add_scalar"):
            c = float(np.asarray(scalars[i]["c"], dtype=np.float64))
            out.append(f"y = y {'*' if name == 'mul_scalar' else '+'} {c!r}")
        else:
            out.append(f"y = y {dict(scale='*', divide='/', shift='+')[name]} {name}{i}.view({code_view})")
    return out


def apply(case: Case, y: Any, consts: dict[str, Any], scalars: tuple[dict[str, np.ndarray], ...]) -> tuple[Any, list[str]]:
    """y (NC*) after the epilogue, and the lines that did it (`lines`). `consts`: name -> tensor, for the
    buffers and the residuals (those NC* too); `scalars`: the case's epilogue constants."""
    import torch.nn.functional as F

    view = (1, -1, *(1,) * case.rank)
    for i, name in enumerate(case.epilogue):
        if name in ACTIVATIONS:
            y = _activation(name)(y)
        elif name == "residual":
            y = y + consts[f"residual{i}"]
        elif name == "batch_norm":
            m, v, g, b = (consts[f"bn{i}_{k}"] for k in BN_KEYS)
            y = F.batch_norm(y, m, v, g, b, training=False, eps=1e-5)
        elif name in ("mul_scalar", "add_scalar"):
            c = float(np.asarray(scalars[i]["c"], dtype=np.float64))
            y = y * c if name == "mul_scalar" else y + c
        else:
            c = consts[f"{name}{i}"].view(view)
            y = {"scale": y * c, "divide": y / c, "shift": y + c}[name]
    return y, lines(case, scalars)
