"""The epilogue in JAX, as a user writes it after a conv: shared by the eager `jax` backend (each op
dispatched on its own, op by op) and `jax-jit` (traced inside one jax.jit with the conv).

`apply(case, y, consts, scalars)` works on y in the case layout (JAX's dimension_numbers keep the
layout, so nothing is transposed): per-channel constants are reshaped to broadcast on the channel
axis (1 for channels_first, last for channels_last); scalars are Python floats (exact: they are
drawn in the case dtype, and a Python float is weakly typed, so y keeps its dtype).

Batch norm: core JAX has no inference batch-norm op (flax.linen.BatchNorm and haiku are outside
core), so it is written out as users do: (y - mean) * gamma / jnp.sqrt(var + 1e-5) + beta.
gelu: jax.nn.gelu defaults to approximate=True (the tanh form), a different function from the
canonical erf GELU, so approximate=False is passed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, EPILOGUE_OPS, LEAKY_SLOPE, Case
from harness.numerics.epilogue import channel_shape

OPS = EPILOGUE_OPS  # every epilogue op has a JAX spelling
ACTIVATIONS = {  # name -> the call as code (y is the argument)
    "relu": "jax.nn.relu(y)", "relu6": "jax.nn.relu6(y)",
    "leaky_relu": f"jax.nn.leaky_relu(y, negative_slope={LEAKY_SLOPE})",
    "sigmoid": "jax.nn.sigmoid(y)", "tanh": "jnp.tanh(y)",
    "gelu": "jax.nn.gelu(y, approximate=False)  # the default approximate=True is the tanh form",
    "hardswish": "jax.nn.hard_swish(y)", "silu": "jax.nn.silu(y)",
    "clamp": f"jnp.clip(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})",
}
BN_KEYS = ("mean", "var", "gamma", "beta")
BINARY = {"scale": ("jnp.multiply", "*"), "divide": ("jnp.divide", "/"), "shift": ("jnp.add", "+")}


def _activation(jax: Any, name: str) -> Any:
    jnp = jax.numpy
    return {"relu": jax.nn.relu, "relu6": jax.nn.relu6,
            "leaky_relu": lambda t: jax.nn.leaky_relu(t, negative_slope=LEAKY_SLOPE),
            "sigmoid": jax.nn.sigmoid, "tanh": jnp.tanh,
            "gelu": lambda t: jax.nn.gelu(t, approximate=False),
            "hardswish": jax.nn.hard_swish, "silu": jax.nn.silu,
            "clamp": lambda t: jnp.clip(t, CLAMP_RANGE[0], CLAMP_RANGE[1])}[name]


def constants(case: Case, scalars: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Name -> array for the per-channel constants, already reshaped to broadcast on the case
    layout's channel axis (scalars are inlined as floats, residuals are inputs)."""
    per = channel_shape(case, case.rank + 2)
    out: dict[str, np.ndarray] = {}
    for i, (name, consts) in enumerate(zip(case.epilogue, scalars)):
        if name in BINARY:
            out[f"{name}{i}"] = consts["c"].reshape(per)
        elif name == "batch_norm":
            out.update({f"bn{i}_{k}": consts[k].reshape(per) for k in BN_KEYS})
    return out


def residuals(case: Case, scalars: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Input name -> array (case layout) for each residual, in epilogue order."""
    return {f"residual{i}": c["r"] for i, (name, c) in enumerate(zip(case.epilogue, scalars)) if name == "residual"}


def lines(case: Case) -> list[str]:
    """The epilogue as code, after `y` (case layout) exists; per-channel constants are named as in
    `constants` (already shaped to broadcast), residuals as in `residuals`."""
    shape = channel_shape(case, case.rank + 2)
    view = f".reshape{shape}"
    out: list[str] = []
    for i, name in enumerate(case.epilogue):
        if name in ACTIVATIONS:
            out.append(f"y = {ACTIVATIONS[name]}")
        elif name == "residual":
            out.append(f"y = jnp.add(y, residual{i})  # an input of y's shape")
        elif name == "batch_norm":
            m, v, g, b = (f"bn{i}_{k}{view}" for k in BN_KEYS)
            out.append(f"y = (y - {m}) * {g} / jnp.sqrt({v} + {BATCH_NORM_EPS})"
                       f" + {b}  # no inference batch-norm op in core JAX: written out")
        elif name in ("mul_scalar", "add_scalar"):
            out.append(f"y = {'jnp.multiply' if name == 'mul_scalar' else 'jnp.add'}(y, c{i})  # c{i}: a Python float")
        else:
            out.append(f"y = {BINARY[name][0]}(y, {name}{i}{view})")
    return out


def apply(jax: Any, case: Case, y: Any, consts: dict[str, Any], scalars: tuple[dict[str, np.ndarray], ...]) -> Any:
    """y (case layout) after the epilogue. `consts`: name -> array for the per-channel constants
    (shaped by `constants`) and the residuals; `scalars`: the case's epilogue constants."""
    jnp = jax.numpy
    for i, name in enumerate(case.epilogue):
        if name in ACTIVATIONS:
            y = _activation(jax, name)(y)
        elif name == "residual":
            y = jnp.add(y, consts[f"residual{i}"])
        elif name == "batch_norm":
            m, v, g, b = (consts[f"bn{i}_{k}"] for k in BN_KEYS)
            y = (y - m) * g / jnp.sqrt(v + BATCH_NORM_EPS) + b
        elif name in ("mul_scalar", "add_scalar"):
            c = float(np.asarray(scalars[i]["c"], dtype=np.float64))
            y = jnp.multiply(y, c) if name == "mul_scalar" else jnp.add(y, c)
        else:
            y = getattr(jnp, BINARY[name][0].split(".")[1])(y, consts[f"{name}{i}"])
    return y


def scalar_lines(case: Case, scalars: tuple[dict[str, np.ndarray], ...]) -> list[str]:
    """`cN = <float>` for each scalar op, so the lines read as a script."""
    return [f"c{i} = {float(np.asarray(c['c'], dtype=np.float64))!r}"
            for i, (name, c) in enumerate(zip(case.epilogue, scalars)) if name in ("mul_scalar", "add_scalar")]
