"""The epilogue part of a reproducer: its constants from the seed, and the float64 reference and
bound carried through it (plain script source, NumPy only).

A script for an epilogue case (reports/repro/script.py) puts `draw_source(case)` after the header (which
drew x, w, b from `rng`), so the generator goes on exactly as harness/numerics/inputs.py's does
(harness/numerics/epilogue.py draw_constants: same calls, same order, rounded to DTYPE). It defines
EPILOGUE, CONSTS (one mapping per op, float64 values exact in DTYPE; residuals in the case layout)
and NAMED (the same arrays under the names every adapter gives them: `scale0`, `bn1_mean`,
`mul_scalar2`, `residual3`, ...), which the framework templates turn into the framework's tensors.

`REFERENCE_SOURCE` follows the conv's bound (reports/repro/verdict.py BOUND_SOURCE, taken at the
conv output z = ref): it applies the epilogue to the reference with its own small code and carries
the bound through each op as harness/numerics/bound.py does (Lipschitz constant times the incoming
error, the op's own rounding, the allowance a fold makes), leaving `ref` the epilogue's output and
`bound` its bound; `scale` stays the conv's (the unit of an exact case's errors, as convdiff's).
"""

from __future__ import annotations

import numpy as np

from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, LEAKY_SLOPE, Case


def draw_source(case: Case) -> str:
    """The script's epilogue constants, drawn after x, w, b (needs the header's rng and round_to_dtype)."""
    geo = case.geometry
    assert geo is not None
    return f'''
# The epilogue (convdiff harness/numerics/epilogue.py): ops applied in order to conv(x, w) + b. Its constants
# come from the same generator after x, w, b, rounded to DTYPE; a residual is drawn channels-first.
EPILOGUE = {list(case.epilogue)}
OUT_SIZE = {tuple(geo.out_size)}
BN_EPS, LEAKY_SLOPE, CLAMP_RANGE = {BATCH_NORM_EPS!r}, {LEAKY_SLOPE!r}, {CLAMP_RANGE!r}


def draw_epilogue():
    def magnitude(shape, lo, hi):  # either sign, |v| in [lo, hi]
        return rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)

    consts = []
    for name in EPILOGUE:
        if name in ("scale", "divide"):
            d = {{"c": magnitude((C_OUT,), 0.5, 2.0)}}
        elif name == "mul_scalar":
            d = {{"c": magnitude((), 0.5, 2.0)}}
        elif name == "shift":
            d = {{"c": rng.standard_normal((C_OUT,))}}
        elif name == "add_scalar":
            d = {{"c": rng.standard_normal(())}}
        elif name == "batch_norm":
            d = {{"mean": 0.5 * rng.standard_normal((C_OUT,)), "var": rng.uniform(0.25, 2.0, size=(C_OUT,)),
                 "gamma": magnitude((C_OUT,), 0.5, 1.5), "beta": 0.5 * rng.standard_normal((C_OUT,))}}
        elif name == "residual":
            r = rng.standard_normal((BATCH, C_OUT, *OUT_SIZE))
            d = {{"r": (np.moveaxis(r, 1, -1) if LAYOUT == "channels_last" else r).copy()}}
        else:
            d = {{}}
        consts.append({{k: round_to_dtype(np.asarray(v, dtype=np.float64)) for k, v in d.items()}})
    return consts


CONSTS = draw_epilogue()
NAMED = {{}}  # the constants under the adapters' names
for i, (name, c) in enumerate(zip(EPILOGUE, CONSTS)):
    if name == "batch_norm":
        NAMED.update({{f"bn{{i}}_{{k}}": c[k] for k in ("mean", "var", "gamma", "beta")}})
    elif name == "residual":
        NAMED[f"residual{{i}}"] = c["r"]
    elif "c" in c:
        NAMED[f"{{name}}{{i}}"] = c["c"]
RESIDUALS = [c["r"] for name, c in zip(EPILOGUE, CONSTS) if name == "residual"]  # inputs after x, case layout
CHANNEL = [1] * (len(KERNEL) + 2)  # a per-channel vector's broadcast shape in the case layout
CHANNEL[-1 if LAYOUT == "channels_last" else 1] = -1
'''


REFERENCE_SOURCE = '''
import math  # noqa: E402 - math.erf for gelu

# The epilogue on the float64 reference, and the bound carried through it (convdiff harness/numerics/bound.py),
# E the bound and M the magnitude behind each value (M = scale at the conv output), u DTYPE's unit roundoff:
#   affine y = a*v + t     E' = |a| E + f u (|a| M + |t|) + u |y|    M' = |a| M + |t|   (f = 2; 6 for batch_norm,
#                          whose |t| stands for |a*mean| + |beta|: the terms t is formed from; f u is a fold's rounding)
#   activation y = g(v)    E' = L E + k u (|y| + |v|) + u |y|         M' = L M + |g(0)|  (L Lipschitz, k = 8 ulps for
#                          the transcendental ones, 0 for the piecewise-linear ones)
#   residual y = v + r     E' = E + u |y|                              M' = M + |r|
LIPSCHITZ = {"relu": 1.0, "relu6": 1.0, "leaky_relu": 1.0, "clamp": 1.0, "tanh": 1.0, "sigmoid": 0.25,
             "gelu": 1.13, "silu": 1.1, "hardswish": 1.5}
ULPS = {"sigmoid": 8.0, "tanh": 8.0, "gelu": 8.0, "silu": 8.0, "hardswish": 8.0}
erf = np.vectorize(math.erf, otypes=[np.float64])


def activation(name, v):
    if name == "relu":
        return np.maximum(v, 0.0)
    if name == "relu6":
        return np.minimum(np.maximum(v, 0.0), 6.0)
    if name == "leaky_relu":
        return np.where(v < 0, LEAKY_SLOPE * v, v)
    if name == "clamp":
        return np.minimum(np.maximum(v, CLAMP_RANGE[0]), CLAMP_RANGE[1])
    if name == "tanh":
        return np.tanh(v)
    sig = np.exp(-np.logaddexp(0.0, -v))  # 1 / (1 + exp(-v)) without overflow
    if name == "sigmoid":
        return sig
    if name == "silu":
        return v * sig
    if name == "gelu":  # the erf form
        return v * (1.0 + erf(v / math.sqrt(2.0))) / 2.0
    if name == "hardswish":
        return v * np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0
    raise ValueError(name)


def affine(name, c):
    """(a, t, |terms of t|, f) of a constant op, broadcast along the case layout's channel axis."""
    def per(v):
        return v.reshape(CHANNEL) if v.ndim else v
    if name == "batch_norm":
        a = per(c["gamma"] / np.sqrt(c["var"] + BN_EPS))
        mean, beta = per(c["mean"]), per(c["beta"])
        return a, beta - mean * a, np.abs(a * mean) + np.abs(beta), 6.0
    if name in ("scale", "mul_scalar"):
        return per(c["c"]), 0.0, 0.0, 2.0
    if name == "divide":
        return 1.0 / per(c["c"]), 0.0, 0.0, 2.0
    return 1.0, per(c["c"]), np.abs(per(c["c"])), 2.0  # shift, add_scalar


u = 2.0**-SIG_BITS
v, E, M = ref, bound, scale
for name, c in zip(EPILOGUE, CONSTS):
    if name in LIPSCHITZ:
        y = activation(name, v)
        E = LIPSCHITZ[name] * E + ULPS.get(name, 0.0) * u * (np.abs(y) + np.abs(v)) + u * np.abs(y)
        M = LIPSCHITZ[name] * M + (0.5 if name == "sigmoid" else 0.0)
    elif name == "residual":
        y = v + c["r"]
        E, M = E + u * np.abs(y), M + np.abs(c["r"])
    else:
        a, t, t_mag, f = affine(name, c)
        y = a * v + t
        E = np.abs(a) * E + f * u * (np.abs(a) * M + t_mag) + u * np.abs(y)
        M = np.abs(a) * M + t_mag
    v = y
ref, bound = v, np.broadcast_to(E, v.shape).copy()  # scale stays the conv's: the unit of an exact case's errors
'''


# ---- for the templates: the adapters' names, and code that feeds the script's NAMED arrays ----------
def constants(case: Case) -> tuple[dict[str, np.ndarray], ...]:
    """The epilogue's constants as convdiff draws them (the lines some adapters write embed the scalars)."""
    from harness.numerics.inputs import make_inputs

    return make_inputs(case).epilogue if case.epilogue else ()


def vector_names(case: Case) -> list[str]:
    """The per-channel constants' names, in epilogue order: `<op><i>` and batch norm's `bn<i>_<key>`."""
    out: list[str] = []
    for i, name in enumerate(case.epilogue):
        if name in ("scale", "divide", "shift"):
            out.append(f"{name}{i}")
        elif name == "batch_norm":
            out += [f"bn{i}_{k}" for k in ("mean", "var", "gamma", "beta")]
    return out


def scalar_names(case: Case) -> list[str]:
    """The scalar constants' names (`mul_scalar<i>`, `add_scalar<i>`), for adapters that name them."""
    return [f"{name}{i}" for i, name in enumerate(case.epilogue) if name in ("mul_scalar", "add_scalar")]


def residual_names(case: Case) -> list[str]:
    """The residual inputs' names, in epilogue order."""
    return [f"residual{i}" for i, name in enumerate(case.epilogue) if name == "residual"]


def assign(names: list[str], expr: str) -> list[str]:
    """`name = expr` for each name, `{}` in expr standing for the script's NAMED[name] (a float64 array)."""
    return [f"{n} = {expr.format(f'NAMED[{n!r}]')}" for n in names]
