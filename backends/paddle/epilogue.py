"""The epilogue in Paddle, as a user writes it after a conv: written once for eager `paddle`
(and `paddle-output-size`) and for the paddle.nn.Layer that `paddle-inference` saves.

y stays in the case layout (Paddle convs take `data_format`, so y is already NC* or N*C):
per-channel constants are reshaped to (1, C, 1, ...) or (1, ..., 1, C) for that data_format,
batch_norm is F.batch_norm(..., training=False, data_format=...), scalars are Python floats
(exact: they are drawn in the case dtype). In a layer, the per-channel constants are its
buffers (persistable: saved with the parameters) and each residual an input after x, so an
optimizer sees constants it may fold and an input it may not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, EPILOGUE_OPS, LEAKY_SLOPE, Case

PADDLE_EPILOGUE_OPS = EPILOGUE_OPS
ACTIVATIONS = {  # name -> the call as code (y is the argument)
    "relu": "F.relu(y)", "relu6": "F.relu6(y)", "leaky_relu": f"F.leaky_relu(y, negative_slope={LEAKY_SLOPE})",
    "sigmoid": "F.sigmoid(y)", "tanh": "paddle.tanh(y)", "gelu": "F.gelu(y, approximate=False)",
    "hardswish": "F.hardswish(y)", "silu": "F.silu(y)", "clamp": f"paddle.clip(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})",
}
BN_KEYS = ("mean", "var", "gamma", "beta")
AFFINE = {"scale": ("multiply", "*"), "divide": ("divide", "/"), "shift": ("add", "+")}


def channel_view(case: Case) -> list[int]:
    """The broadcast shape of a per-channel vector against y in the case layout."""
    ones = [1] * case.rank
    return [1, *ones, -1] if case.channels_last else [1, -1, *ones]


def buffers(case: Case, constants: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Buffer name -> array, for the per-channel constants (scalars are inlined as floats)."""
    out: dict[str, np.ndarray] = {}
    for i, (name, consts) in enumerate(zip(case.epilogue, constants)):
        if name in AFFINE:
            out[f"{name}{i}"] = consts["c"]
        elif name == "batch_norm":
            out.update({f"bn{i}_{k}": consts[k] for k in BN_KEYS})
    return out


def residuals(case: Case, constants: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Input name -> array (case layout) for each residual, in epilogue order."""
    return {f"residual{i}": c["r"] for i, (name, c) in enumerate(zip(case.epilogue, constants)) if name == "residual"}


def _activations(paddle: Any) -> dict[str, Callable[[Any], Any]]:
    import paddle.nn.functional as F

    return {"relu": F.relu, "relu6": F.relu6, "leaky_relu": lambda t: F.leaky_relu(t, negative_slope=LEAKY_SLOPE),
            "sigmoid": F.sigmoid, "tanh": paddle.tanh, "gelu": lambda t: F.gelu(t, approximate=False),
            "hardswish": F.hardswish, "silu": F.silu, "clamp": lambda t: paddle.clip(t, *CLAMP_RANGE)}


def apply(paddle: Any, case: Case, data_format: str, y: Any, tensors: Mapping[str, Any],
          constants: tuple[dict[str, np.ndarray], ...]) -> Any:
    """y (case layout) after the epilogue. `tensors`: name -> paddle tensor for every buffer
    and residual (names from `buffers` and `residuals`); `constants`: the case's epilogue
    constants (the scalars are read from them)."""
    import paddle.nn.functional as F

    acts, view = _activations(paddle), channel_view(case)
    for i, name in enumerate(case.epilogue):
        if name in acts:
            y = acts[name](y)
        elif name == "residual":
            y = paddle.add(y, tensors[f"residual{i}"])
        elif name == "batch_norm":
            m, v, g, b = (tensors[f"bn{i}_{k}"] for k in BN_KEYS)
            y = F.batch_norm(y, m, v, weight=g, bias=b, training=False, epsilon=BATCH_NORM_EPS, data_format=data_format)
        elif name in ("mul_scalar", "add_scalar"):
            c = float(np.asarray(constants[i]["c"], dtype=np.float64))
            y = y * c if name == "mul_scalar" else y + c
        else:
            fn = getattr(paddle, AFFINE[name][0])
            y = fn(y, paddle.reshape(tensors[f"{name}{i}"], view))
    return y


def lines(case: Case, data_format: str, constants: tuple[dict[str, np.ndarray], ...], prefix: str = "") -> list[str]:
    """The epilogue as translation lines; `prefix` names where the constants live (e.g. 'self.')."""
    view = channel_view(case)
    out: list[str] = []
    for i, name in enumerate(case.epilogue):
        if name in ACTIVATIONS:
            out.append(f"y = {ACTIVATIONS[name]}")
        elif name == "residual":
            out.append(f"y = paddle.add(y, residual{i})  # an input of y's shape")
        elif name == "batch_norm":
            m, v, g, b = (f"{prefix}bn{i}_{k}" for k in BN_KEYS)
            out.append(f"y = F.batch_norm(y, {m}, {v}, weight={g}, bias={b}, training=False, "
                       f"epsilon={BATCH_NORM_EPS}, data_format={data_format!r})")
        elif name in ("mul_scalar", "add_scalar"):
            c = float(np.asarray(constants[i]["c"], dtype=np.float64))
            out.append(f"y = y {'*' if name == 'mul_scalar' else '+'} {c!r}")
        else:
            out.append(f"y = paddle.{AFFINE[name][0]}(y, paddle.reshape({prefix}{name}{i}, {view}))")
    return out
