"""The epilogue in Relax, as a user writes it after a conv: shared by `tvm` (every constant a
function parameter, passed at run time) and `tvm-bound` (the same function with the weights and
the epilogue constants bound as relax constants, so the default pipeline may fold them).

Pure where it decides (names, shapes, lines: no TVM import); `emit` takes the `relax` module.
Per-channel constants are (C,) parameters: channels_first reshapes them to (1, C, 1, ...) in the
graph (as the bias is), channels_last broadcasts them on the last axis as they are. Scalars
(mul_scalar, add_scalar) are 0-d parameters. Each residual is a parameter of y's shape.

Where Relax's spelling is not one op, the translation says so:
- batch_norm: `relax.op.nn.batch_norm(..., training=False)` returns a tuple (out, moving_mean,
  moving_var) in every mode (users take `[0]`); it legalizes to topi's inference form
  (y - mean) / sqrt(var + eps) * gamma + beta. Its default is training=True (batch statistics).
  On float16/bfloat16 the legalized op returns float32 (topi adds a float32 epsilon): a TVM
  divergence left visible (known issue tvm-relax-batch-norm-half-returns-float32).
- relu6: `relax.op.nn.relu6` is `relax.op.clip(y, 0, 6)` in TVM's Python (no relax.nn.relu6 op).
- gelu: `relax.op.nn.gelu` is the erf form (tanh form is the separate `gelu_tanh`); float16
  evaluates erf in float32.
- hardswish: Relax has no hardswish op: written out as y * clip(y + 3, 0, 6) / 6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, EPILOGUE_OPS, LEAKY_SLOPE, Case

OPS = EPILOGUE_OPS  # every epilogue op has a Relax spelling
BN_KEYS = ("mean", "var", "gamma", "beta")
BINARY = {"scale": "multiply", "divide": "divide", "shift": "add", "mul_scalar": "multiply", "add_scalar": "add"}
ACTIVATIONS = {  # name -> the call as code (y is the argument)
    "relu": "relax.op.nn.relu(y)",
    "relu6": "relax.op.nn.relu6(y)  # TVM's relu6 is relax.op.clip(y, 0, 6)",
    "leaky_relu": f"relax.op.nn.leakyrelu(y, alpha={LEAKY_SLOPE})",
    "sigmoid": "relax.op.sigmoid(y)", "tanh": "relax.op.tanh(y)",
    "gelu": "relax.op.nn.gelu(y)  # the erf form (relax.op.nn.gelu_tanh is the tanh form)",
    "hardswish": "relax.op.divide(relax.op.multiply(y, relax.op.clip(relax.op.add(y, relax.const(3.0)), 0, 6)), "
                 "relax.const(6.0))  # no hardswish op in Relax: y * clip(y + 3, 0, 6) / 6",
    "silu": "relax.op.nn.silu(y)",
    "clamp": f"relax.op.clip(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})",
}


@dataclass(frozen=True)
class Param:
    """One function parameter the epilogue adds after x, w (and b)."""

    name: str                 # the Relax variable's name
    shape: tuple[int, ...]    # its shape (per channel: (C,); scalar: (); residual: y's shape)
    index: int                # the epilogue op it belongs to
    key: str                  # its key in that op's constants (numerics/epilogue.py)

    @property
    def residual(self) -> bool:
        """A residual is an input of y's shape, never a constant to bind."""
        return self.key == "r"


def parameters(case: Case) -> list[Param]:
    """The epilogue's parameters, in epilogue order."""
    c = (case.out_channels,)
    out: list[Param] = []
    for i, name in enumerate(case.epilogue):
        if name in ("scale", "divide", "shift"):
            out.append(Param(f"{name}{i}", c, i, "c"))
        elif name in ("mul_scalar", "add_scalar"):
            out.append(Param(f"{name}{i}", (), i, "c"))
        elif name == "batch_norm":
            out += [Param(f"bn{i}_{k}", c, i, k) for k in BN_KEYS]
        elif name == "residual":
            out.append(Param(f"residual{i}", case.output_shape, i, "r"))
    return out


def arrays(case: Case, constants: tuple[dict[str, np.ndarray], ...]) -> dict[str, np.ndarray]:
    """Parameter name -> its array (case dtype; residuals in the case layout), in parameter order."""
    # np.require keeps a 0-d scalar 0-d (np.ascontiguousarray would make it shape (1,))
    return {p.name: np.require(constants[p.index][p.key], requirements="C") for p in parameters(case)}


def channel_view(case: Case) -> tuple[int, ...] | None:
    """The reshape a (C,) vector needs to broadcast on y: (1, C, 1, ...), or None for channels_last."""
    return None if case.channels_last else (1, case.out_channels, *([1] * case.rank))


def lines(case: Case) -> list[str]:
    """The epilogue as code after `y` exists (parameters named as in `parameters`)."""
    view = channel_view(case)

    def per(name: str) -> str:
        return name if view is None else f"relax.op.reshape({name}, {view})"

    out: list[str] = []
    if case.epilogue:
        decl = "; ".join(f"{p.name}: R.Tensor({p.shape})" for p in parameters(case))
        out.append(f"{decl}  # epilogue parameters, {case.dtype}")
    axis = case.rank + 1 if case.channels_last else 1
    for i, name in enumerate(case.epilogue):
        if name in ACTIVATIONS:
            out.append(f"y = {ACTIVATIONS[name]}")
        elif name == "residual":
            out.append(f"y = relax.op.add(y, residual{i})  # an input of y's shape")
        elif name == "batch_norm":
            m, v, g, b = (f"bn{i}_{k}" for k in BN_KEYS)  # (C,) with the channel axis: no reshape
            out.append(f"y = relax.op.nn.batch_norm(y, {g}, {b}, {m}, {v}, axis={axis}, epsilon={BATCH_NORM_EPS}, "
                       "training=False)[0]  # a tuple (out, moving_mean, moving_var) in every mode")
        elif name in ("mul_scalar", "add_scalar"):
            out.append(f"y = relax.op.{BINARY[name]}(y, {name}{i})  # a 0-d tensor")
        else:
            out.append(f"y = relax.op.{BINARY[name]}(y, {per(f'{name}{i}')})")
    return out


def emit(relax: Any, bb: Any, case: Case, y: Any, params: dict[str, Any]) -> Any:
    """Emit the epilogue after `y` in the open dataflow block of `bb`; `params`: name -> relax.Var."""
    view = channel_view(case)
    op = relax.op

    def per(name: str) -> Any:
        return params[name] if view is None else op.reshape(params[name], view)

    def const(v: float) -> Any:
        return relax.const(v, case.dtype)

    axis = case.rank + 1 if case.channels_last else 1
    for i, name in enumerate(case.epilogue):
        if name == "relu":
            y = bb.emit(op.nn.relu(y))
        elif name == "relu6":
            y = bb.emit(op.nn.relu6(y))
        elif name == "leaky_relu":
            y = bb.emit(op.nn.leakyrelu(y, alpha=LEAKY_SLOPE))
        elif name == "sigmoid":
            y = bb.emit(op.sigmoid(y))
        elif name == "tanh":
            y = bb.emit(op.tanh(y))
        elif name == "gelu":
            y = bb.emit(op.nn.gelu(y))
        elif name == "hardswish":
            y = bb.emit(op.divide(op.multiply(y, op.clip(op.add(y, const(3.0)), 0, 6)), const(6.0)))
        elif name == "silu":
            y = bb.emit(op.nn.silu(y))
        elif name == "clamp":
            y = bb.emit(op.clip(y, CLAMP_RANGE[0], CLAMP_RANGE[1]))
        elif name == "residual":
            y = bb.emit(op.add(y, params[f"residual{i}"]))
        elif name == "batch_norm":
            m, v, g, b = (params[f"bn{i}_{k}"] for k in BN_KEYS)
            bn = bb.emit(op.nn.batch_norm(y, g, b, m, v, axis=axis, epsilon=BATCH_NORM_EPS, training=False))
            y = bb.emit(relax.TupleGetItem(bn, 0))
        elif name in ("mul_scalar", "add_scalar"):
            y = bb.emit(getattr(op, BINARY[name])(y, params[f"{name}{i}"]))
        else:
            y = bb.emit(getattr(op, BINARY[name])(y, per(f"{name}{i}")))
    return y
