"""Backend output vs oracle: structure first, then values against the per-element bound."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.model.case import Case
from harness.numerics.bound import UNIT_ROUNDOFF, error_bound
from harness.numerics.epilogue import Trace

SPATIAL_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}
PROFILE_LIMIT = 64
HEAT_LIMIT = 32  # cells per side of the heat-map slice kept in a record


@dataclass
class Verdict:
    status: str
    max_abs_err: float | None = None
    rel_err: float | None = None
    bound_ratio: float | None = None
    message: str = ""
    where: dict[str, Any] | None = field(default=None)
    nonfinite: int = 0  # output elements that are NaN or inf where the reference is finite


def _ranges(indices: np.ndarray) -> str:
    """[0,1,2,5,7,8] -> '0-2,5,7-8'."""
    out, idx = [], [int(i) for i in indices]
    start = prev = None
    for i in [*idx, None]:
        if start is not None and (i is None or i != prev + 1):
            out.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return ",".join(out)


def _axis_names(case: Case, output: str) -> tuple[str, ...]:
    """Axis names of an output, channels first: data (N, C, *spatial), weight (O, I, *k), bias (-, C)."""
    if output == "grad_weight":
        return ("I", "O", *(f"k{n}" for n in SPATIAL_NAMES[case.rank])) if case.transpose else \
            ("O", "I", *(f"k{n}" for n in SPATIAL_NAMES[case.rank]))
    if output == "grad_bias":
        return ("-", "C")
    return ("N", "C", *SPATIAL_NAMES[case.rank])


def locate(case: Case, ratio: np.ndarray, bad: np.ndarray, output: str = "out") -> dict[str, Any]:
    """Where the errors sit: per-axis profile of the worst ratio, and border vs interior."""
    if output == "grad_bias":  # (C,) seen as (1, C), so the profile and heat map keep their form
        ratio, bad = ratio.reshape(1, -1), bad.reshape(1, -1)
    elif case.channels_last and output in ("out", "grad_input"):
        ratio, bad = np.moveaxis(ratio, -1, 1), np.moveaxis(bad, -1, 1)
    names = _axis_names(case, output)
    axes = {}
    for ax, name in enumerate(names):
        others = tuple(i for i in range(ratio.ndim) if i != ax)
        prof = np.max(ratio, axis=others) if ratio.size else np.zeros(0)
        axes[name] = {
            "bad_indices": _ranges(np.flatnonzero(np.any(bad, axis=others))),
            "profile": [float(f"{v:.3g}") for v in prof[:PROFILE_LIMIT]],
            "length": int(ratio.shape[ax]),
        }
    border = np.zeros(bad.shape, dtype=bool)
    for ax in range(2, bad.ndim):
        sl = [slice(None)] * bad.ndim
        for edge in (0, -1):
            sl[ax] = edge
            border[tuple(sl)] = True
    n_border, n_inner = int(np.sum(bad & border)), int(np.sum(bad & ~border))
    region = "border" if n_inner == 0 else "interior" if n_border == 0 else "border+interior"
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return {
        "bad": int(bad.sum()), "total": int(bad.size), "region": region,
        "worst_index": [int(i) for i in worst], "axes": axes,
        "heat": _heat_slice(ratio, worst, names),
    }


def _heat_slice(ratio: np.ndarray, worst: tuple, names: tuple[str, ...]) -> dict[str, Any]:
    """A 2-D slice of the error/bound ratio through the worst element, for the report's heat map.

    The last two axes (H x W, or C x W in 1-D), other axes fixed at the worst index;
    max-pooled to at most HEAT_LIMIT per side so no bad element disappears; 2 digits;
    non-finite ratios (NaN/Inf outputs) become null.
    """
    fixed = tuple(int(i) for i in worst[:-2])
    plane = ratio[fixed] if ratio.size else np.zeros((0, 0))
    blocks = [max(1, -(-n // HEAT_LIMIT)) for n in plane.shape]
    if plane.size and any(b > 1 for b in blocks):
        pad = [(0, -n % b) for n, b in zip(plane.shape, blocks)]
        plane = np.pad(plane, pad, constant_values=0.0)
        plane = plane.reshape(plane.shape[0] // blocks[0], blocks[0], plane.shape[1] // blocks[1], blocks[1]).max(axis=(1, 3))
    cells = [[float(f"{v:.2g}") if np.isfinite(v) else None for v in row] for row in plane]
    return {"axes": list(names[-2:]), "fixed": dict(zip(names[:-2], fixed)), "block": blocks, "values": cells}


def compare(case: Case, out: np.ndarray, out_dtype: str, ref: np.ndarray, scale: np.ndarray,
            tf32: bool = False, output: str = "out", trace: Trace | None = None,
            rounding: str = "half_to_even") -> Verdict:
    """Decide pass / mismatch / shape_mismatch for one backend result (`output`: out or a gradient)."""
    if tuple(out.shape) != tuple(ref.shape):
        return Verdict("shape_mismatch", message=f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
    if out_dtype != case.dtype:
        return Verdict("mismatch", message=f"output dtype {out_dtype}, expected {case.dtype}")
    out64 = np.asarray(out, dtype=np.float64)
    finite = np.isfinite(out64)
    err = np.abs(out64 - ref)
    bound = error_bound(case, ref, scale, tf32, output, trace, rounding)
    # Where exact arithmetic makes the bound 0, measure errors in units of one rounding
    # at that element instead, so the ratio stays finite and sortable (quantized: units of y).
    unit = bound if case.quantized else np.maximum(bound, UNIT_ROUNDOFF[case.dtype] * scale + np.finfo(np.float64).tiny)
    with np.errstate(over="ignore"):
        ratio = np.where(finite, err / unit, np.inf)
    peak = float(np.max(np.abs(ref))) if ref.size else 0.0
    max_err = float(np.max(np.where(finite, err, 0.0))) if err.size else 0.0
    rel = max_err / peak if peak > 0 else (0.0 if max_err == 0 else float("inf"))
    if not finite.all():
        nonfinite = int((~finite).sum())
        kinds = "NaN" if np.isnan(out64).any() else "Inf"
        return Verdict("mismatch", max_err, _json_float(rel), None,
                       f"{nonfinite} non-finite output element(s) ({kinds}) where the reference is finite",
                       locate(case, ratio, ~finite, output), nonfinite)
    worst = float(np.max(ratio)) if ratio.size else 0.0
    bad = ratio > 1.0
    if not bad.any():
        return Verdict("pass", max_err, _json_float(rel), worst)
    where = locate(case, ratio, bad, output)
    return Verdict("mismatch", max_err, _json_float(rel), _json_float(worst),
                   f"{where['bad']}/{where['total']} elements beyond the bound ({where['region']}); "
                   f"max |err| {max_err:.3g}, {_fmt_ratio(worst)} x bound", where)


def _json_float(v: float) -> float | None:
    return v if np.isfinite(v) else None


def _fmt_ratio(v: float) -> str:
    return f"{v:.3g}"
