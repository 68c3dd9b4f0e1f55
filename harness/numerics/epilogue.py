"""The epilogue in float64: its constants from the seed, and its application after the conv.

A case's `epilogue` is a list of names (harness.model.case.EPILOGUE_OPS) applied in order to
y = conv(x, w) + b. Constant ops are affine per output channel, y = a*v + t:

    scale       a = c (per channel)            divide      a = 1/c (per channel)
    shift       t = c (per channel)            mul_scalar  a = c (one number)
    add_scalar  t = c (one number)             batch_norm  a = gamma/sqrt(var + eps), t = beta - mean*a

Activations act per element (relu, relu6, leaky_relu 0.1, sigmoid, tanh, gelu with erf,
hardswish, silu, clamp to [-1, 1]); `residual` adds a second input of y's shape.

Constants are drawn after x, w, b from the same generator, stored in the case dtype (exact
there, like x and w), so every backend and the oracle see the same values. `apply_epilogue`
returns the output and a trace of every step (its input and output), from which
harness.numerics.bound propagates the conv's error bound.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, EPILOGUE_ACTIVATIONS, EPILOGUE_CONSTANTS, LEAKY_SLOPE, Case

# erf per element from the C library (Python's math.erf, correctly rounded to within an ulp): NumPy has no erf,
# and the base install must not need SciPy for one function (a report-only install imports this module).
erf = np.vectorize(math.erf, otypes=[np.float64])

Constants = dict[str, np.ndarray]


def _magnitude(rng: np.random.Generator, shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
    """Values of either sign with |v| in [lo, hi]: multipliers that neither vanish nor explode."""
    return rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def draw_constants(case: Case, rng: np.random.Generator, dtype: np.dtype) -> tuple[Constants, ...]:
    """One mapping per epilogue op, drawn in order (float64 draws, stored in the case dtype)."""
    c = (case.out_channels,)
    out: list[Constants] = []
    for name in case.epilogue:
        if name in ("scale", "divide"):
            d = {"c": _magnitude(rng, c, 0.5, 2.0)}
        elif name == "mul_scalar":
            d = {"c": _magnitude(rng, (), 0.5, 2.0)}
        elif name == "shift":
            d = {"c": rng.standard_normal(c)}
        elif name == "add_scalar":
            d = {"c": rng.standard_normal(())}
        elif name == "batch_norm":
            d = {"mean": 0.5 * rng.standard_normal(c), "var": rng.uniform(0.25, 2.0, size=c),
                 "gamma": _magnitude(rng, c, 0.5, 1.5), "beta": 0.5 * rng.standard_normal(c)}
        elif name == "residual":
            assert case.geometry is not None
            r = rng.standard_normal((case.batch, case.out_channels, *case.geometry.out_size))
            d = {"r": np.ascontiguousarray(np.moveaxis(r, 1, -1) if case.channels_last else r)}
        else:
            d = {}
        out.append({k: np.asarray(v).astype(dtype) for k, v in d.items()})
    return tuple(out)


def channel_shape(case: Case, ndim: int) -> tuple[int, ...]:
    """The broadcast shape of a per-channel vector against an output in the case layout."""
    shape = [1] * ndim
    shape[-1 if case.channels_last else 1] = -1
    return tuple(shape)


def affine(case: Case, name: str, consts: Constants, ndim: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, t) in float64, broadcastable to the output, for a constant op: y = a*v + t."""
    f = {k: np.asarray(v, dtype=np.float64) for k, v in consts.items()}
    per = channel_shape(case, ndim)
    if name == "batch_norm":
        a = f["gamma"] / np.sqrt(f["var"] + BATCH_NORM_EPS)
        return a.reshape(per), (f["beta"] - f["mean"] * a).reshape(per)
    c = f["c"].reshape(per) if f["c"].ndim else f["c"]
    one, zero = np.float64(1.0), np.float64(0.0)
    return {"scale": (c, zero), "mul_scalar": (c, zero), "divide": (1.0 / c, zero),
            "shift": (one, c), "add_scalar": (one, c)}[name]


def activation(name: str, v: np.ndarray) -> np.ndarray:
    """The activation in float64 (gelu with erf, as torch's default and ONNX Gelu)."""
    if name == "relu":
        return np.maximum(v, 0.0)
    if name == "relu6":
        return np.clip(v, 0.0, 6.0)
    if name == "leaky_relu":
        return np.where(v >= 0, v, LEAKY_SLOPE * v)
    if name == "sigmoid":
        return 0.5 * (1.0 + np.tanh(0.5 * v))  # exact identity, no overflow for large |v|
    if name == "tanh":
        return np.tanh(v)
    if name == "gelu":
        return 0.5 * v * (1.0 + erf(v / np.sqrt(2.0)))
    if name == "hardswish":
        return v * np.clip(v + 3.0, 0.0, 6.0) / 6.0
    if name == "silu":
        return v * 0.5 * (1.0 + np.tanh(0.5 * v))
    if name == "clamp":
        return np.clip(v, *CLAMP_RANGE)
    raise ValueError(f"not an activation: {name}")


@dataclass(frozen=True)
class Step:
    """One epilogue op as the oracle ran it: its name, input and output (float64, case layout);
    for a constant op also its (a, t) and `t_mag`, the magnitude of the terms t is formed from
    (|t| itself, but |a*mean| + |beta| for batch_norm, whose t may cancel); for the residual
    its addend in `t`."""

    name: str
    v: np.ndarray
    y: np.ndarray
    a: np.ndarray | None = None
    t: np.ndarray | None = None
    t_mag: np.ndarray | None = None


@dataclass(frozen=True)
class Trace:
    """The conv's own output (with bias) and every epilogue step after it."""

    z: np.ndarray
    steps: tuple[Step, ...]


def apply_epilogue(case: Case, z: np.ndarray, constants: tuple[Constants, ...]) -> tuple[np.ndarray, Trace]:
    """The epilogue applied in float64 to the conv output `z` (case layout): (output, trace)."""
    v, steps = z, []
    for name, consts in zip(case.epilogue, constants):
        if name in EPILOGUE_ACTIVATIONS:
            y = activation(name, v)
            steps.append(Step(name, v, y))
        elif name == "residual":
            r = np.asarray(consts["r"], dtype=np.float64)
            y = v + r
            steps.append(Step(name, v, y, t=r))
        else:
            a, t = affine(case, name, consts, v.ndim)
            y = a * v + t
            t_mag = np.abs(t)
            if name == "batch_norm":
                per = channel_shape(case, v.ndim)
                mean, beta = (np.asarray(consts[k], dtype=np.float64).reshape(per) for k in ("mean", "beta"))
                t_mag = np.abs(a * mean) + np.abs(beta)
            steps.append(Step(name, v, y, a=np.asarray(a), t=np.asarray(t), t_mag=t_mag))
        v = y
    return v, Trace(z, tuple(steps))


# ---- folds: what a graph optimizer does with the leading constant ops -------------------
def leading_fold(case: Case, constants: tuple[Constants, ...]) -> tuple[int, np.ndarray, np.ndarray] | None:
    """(ops folded, a, t) for the leading run of constant ops, per output channel (float64)."""
    n, a, t = 0, np.ones(case.out_channels), np.zeros(case.out_channels)
    for name, consts in zip(case.epilogue, constants):
        if name not in EPILOGUE_CONSTANTS:
            break
        ai, ti = affine(dataclasses.replace(case, layout="channels_first"), name, consts, 2)
        ai, ti = np.broadcast_to(ai, (1, case.out_channels)).ravel(), np.broadcast_to(ti, (1, case.out_channels)).ravel()
        a, t, n = a * ai, t * ai + ti, n + 1
    return (n, a, t) if n else None


def wrong_axis(case: Case) -> int | None:
    """The weight axis a fold would wrongly use, where it has C_out's length (else None)."""
    if case.transpose:
        return 0 if case.in_channels == case.out_channels else None
    return 1 if case.in_channels // case.groups == case.out_channels else None
