"""Numerical drift: how a backend's error grows with the accumulation length K.

For each float32 result of a `drift`-tagged case, the normalized error is
e = max_i |out_i - ref_i| / (u * scale_i), u = 2^-24. It follows from the record:
the bound is gamma(K+2) * scale, so e = bound_ratio * gamma(K+2) / u.

Theory: the deterministic worst case grows like K; the probabilistic bound
(Higham & Mary, 2019) says e <= lambda * sqrt(K) with overwhelming probability, and
blocked or pairwise summation stays well below it. A backend is flagged as `drift`
when its e exceeds LAMBDA * sqrt(K) at some K (the first such kernel size is named),
or when it exceeds PEER_FACTOR times the median of the other backends on the same
case while also growing faster than sqrt(K) (the fitted exponent is reported).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.execution.records import Record
from harness.numerics.bound import FLOAT32_U, gamma

LAMBDA = 4.0
PEER_FACTOR = 8.0


@dataclass
class DriftCurve:
    backend: str
    device: str
    family: str  # e.g. conv_transpose3d, per case id prefix
    points: list[dict[str, Any]] = field(default_factory=list)  # {case_id, K, kernel, e, peers}
    exponent: float | None = None
    flagged: bool = False
    reason: str = ""


def normalized_error(rec: Record) -> float | None:
    if rec.dtype != "float32" or rec.bound_ratio is None or rec.status not in ("pass", "mismatch"):
        return None
    k = accumulation_length(rec.params)
    return rec.bound_ratio * gamma(k + 2, FLOAT32_U) / FLOAT32_U


def accumulation_length(params: dict[str, Any]) -> int:
    return params["in_channels"] // params["groups"] * math.prod(params["kernel_size"])


def _fit_exponent(points: list[dict[str, Any]]) -> float | None:
    """Least-squares slope of log e against log K."""
    xs = [math.log(p["K"]) for p in points if p["e"] > 0]
    ys = [math.log(p["e"]) for p in points if p["e"] > 0]
    if len(xs) < 3 or max(xs) == min(xs):
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def analyze(records: Iterable[Record]) -> list[DriftCurve]:
    """One curve per (case family, backend, device) over the drift cases."""
    by_case: dict[str, dict[str, float]] = defaultdict(dict)
    curves: dict[tuple[str, str, str], DriftCurve] = {}
    for rec in records:
        if "drift" not in rec.params.get("tags", []) or rec.output != "out":
            continue  # the forward output's K and scale only (gradients have their own K)
        e = normalized_error(rec)
        if e is None:
            continue
        family = rec.case_id.split("[")[0]
        key = (family, rec.backend, rec.device)
        curve = curves.setdefault(key, DriftCurve(rec.backend, rec.device, family))
        curve.points.append({"case_id": rec.case_id, "K": accumulation_length(rec.params),
                             "kernel": rec.params["kernel_size"], "e": e})
        by_case[rec.case_id][f"{rec.backend}-{rec.device}"] = e
    for curve in curves.values():
        curve.points.sort(key=lambda p: p["K"])
        curve.exponent = _fit_exponent(curve.points)
        me = f"{curve.backend}-{curve.device}"
        for p in curve.points:
            others = [v for t, v in by_case[p["case_id"]].items() if t != me]
            p["peers"] = statistics.median(others) if others else None
        _judge(curve)
    return sorted(curves.values(), key=lambda c: (c.family, c.backend, c.device))


def _judge(curve: DriftCurve) -> None:
    for p in curve.points:
        if p["e"] > LAMBDA * math.sqrt(p["K"]):
            curve.flagged = True
            curve.reason = (f"normalized error {p['e']:.3g} at K={p['K']} (kernel {p['kernel']}) exceeds "
                            f"{LAMBDA:g}*sqrt(K) = {LAMBDA * math.sqrt(p['K']):.3g}")
            return
    growing = curve.exponent is not None and curve.exponent > 0.5
    for p in curve.points:
        if growing and p["peers"] and p["e"] > PEER_FACTOR * p["peers"]:
            curve.flagged = True
            curve.reason = (f"normalized error {p['e']:.3g} at K={p['K']} (kernel {p['kernel']}) is "
                            f"{p['e'] / p['peers']:.3g}x the other backends' median, growing like K^{curve.exponent:.2f}")
            return


def drift_summary(curves: list[DriftCurve]) -> list[dict[str, Any]]:
    return [asdict(c) for c in curves]


def format_drift(curves: list[DriftCurve] | list[dict[str, Any]], kernels: tuple[int, ...] = (3, 5, 7, 9)) -> str:
    """Normalized error at the given cubic/square kernel sizes, per backend and family."""
    curves = [DriftCurve(**c) if isinstance(c, dict) else c for c in curves]
    lines = [f"{'family':<28}{'target':<40}" + "".join(f"{'k=' + str(k):>10}" for k in kernels) + f"{'K^b':>7}  flag"]
    for c in curves:
        at = {p["kernel"][0]: p for p in c.points if len(set(p["kernel"])) == 1}
        cells = "".join(f"{at[k]['e']:>10.3g}" if k in at else f"{'-':>10}" for k in kernels)
        b = f"{c.exponent:.2f}" if c.exponent is not None else "-"
        lines.append(f"{c.family:<28}{c.backend + '-' + c.device:<40}{cells}{b:>7}  {'DRIFT: ' + c.reason if c.flagged else ''}")
    return "\n".join(lines)
