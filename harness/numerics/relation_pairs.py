"""A relation's verdict from the outputs of its runs: pairs of arrays that must agree, each within its bound.

`needed(relation, case, runs)` names the runs (keys of relations.variants, and `main`) a relation reads;
`outcome(relation, case, inputs, oracle, runs, outs)` compares them: `pass` where every pair is the same bits,
`within_bound` where some differ but every difference is inside the bound harness/numerics/bound.py derives
for the two computations, `mismatch` beyond it. For `subnormal` it also states, as measured, whether the
target kept or flushed subnormal inputs, products and outputs, and names `flush_to_zero` where flushing
explains every element beyond the bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.model.case import Case
from harness.numerics.bound import UNIT_ROUNDOFF, adjoint_bound, conv_bound, pair_bound, scaling_bound, subnormal_bound
from harness.numerics.inputs import Inputs
from harness.numerics.oracle import reference
from harness.numerics.relations import (
    Variant,
    batch_key,
    batch_sizes,
    batched_inputs,
    is_subnormal,
    plain,
    plain_key,
    probe_data,
    probe_shifts,
    single_key,
    thread_batches,
    to_layout,
    with_batch,
)

STATUS_ORDER = ("pass", "within_bound", "mismatch")


@dataclass
class Pair:
    """One comparison: what the target computed against what the relation says it must equal."""

    group: str           # what the message reports on: "again", "b=7", "k=+40", "input" ...
    status: str          # pass | within_bound | mismatch; unsupported: a run the target cannot make (detail: why)
    max_abs: float = 0.0
    ratio: float = 0.0   # largest |a - b| / bound (0 for the same bits)
    differing: int = 0   # elements not the same bits
    total: int = 0
    detail: str = ""     # a structural problem (shape, dtype, non-finite values)


@dataclass
class Outcome:
    status: str
    pairs: list[Pair]
    facts: dict[str, str] = field(default_factory=dict)  # subnormal: inputs/products/outputs -> kept|flushed|...
    flush_to_zero: bool = False
    peak: float = 0.0  # the largest |expected| compared (for rel_err)

    @property
    def max_abs(self) -> float:
        return max((p.max_abs for p in self.pairs), default=0.0)

    @property
    def ratio(self) -> float:
        return max((p.ratio for p in self.pairs), default=0.0)

    def message(self) -> str:
        groups: dict[str, list[Pair]] = {}
        for p in self.pairs:
            groups.setdefault(p.group, []).append(p)
        parts = []
        for g, ps in groups.items():
            worst = max(ps, key=lambda p: (_rank(p.status), p.ratio))
            if worst.status == "unsupported":
                parts.append(f"{g}: unsupported ({worst.detail})")
                continue
            if worst.status == "pass":
                parts.append(f"{g}: bitwise")
                continue
            n, tot = sum(p.differing for p in ps), sum(p.total for p in ps)
            what = worst.detail or f"{n}/{tot} elements differ, {worst.ratio:.3g} x bound"
            parts.append(f"{g}: {'within bound' if worst.status == 'within_bound' else 'BEYOND bound'} ({what})")
        facts = "; subnormal " + ", ".join(f"{k} {v}" for k, v in self.facts.items()) if self.facts else ""
        return "; ".join(parts) + facts


def _rank(status: str) -> int:
    """A pair's place in the message's worst-first choice: an unsupported run below a bitwise pair."""
    return STATUS_ORDER.index(status) if status in STATUS_ORDER else -1


def compare(group: str, a: np.ndarray, b: np.ndarray, bound: np.ndarray | float,
            unit: np.ndarray | float = 0.0) -> Pair:
    """a (the target's) against b: another output of the target (same bits?), or a float64 expectation
    (exactly equal?); every difference within `bound`? Where the bound is 0 (exact arithmetic), a difference
    is measured in `unit`s (one rounding at that element), as harness/numerics/compare.py does."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return Pair(group, "mismatch", float("inf"), float("inf"), a.size, b.size, f"shape {a.shape} against {b.shape}")
    if b.dtype != np.float64 and a.dtype != b.dtype:
        return Pair(group, "mismatch", float("inf"), float("inf"), a.size, a.size, f"dtype {a.dtype} against {b.dtype}")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if b.dtype == np.float64:
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
    else:
        width = a.dtype.itemsize
        kind = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
        same = np.ascontiguousarray(a).view(kind) == np.ascontiguousarray(b).view(kind)
    if same.all():
        return Pair(group, "pass", total=a.size)
    diff = np.abs(a64 - b64)
    bad_nan = ~same & ~(np.isfinite(a64) & np.isfinite(b64))
    try:
        bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), diff.shape)
        unit = np.broadcast_to(np.asarray(unit, dtype=np.float64), diff.shape)
    except ValueError:  # the target gave both runs a shape of its own, not the case's: nothing to bound
        return Pair(group, "mismatch", float("inf"), float("inf"), a.size, a.size,
                    f"shape {a.shape}, the case's is {np.shape(bound)}")
    den = np.maximum(bound, unit)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, diff / np.where(den > 0, den, 1.0), np.where(diff > 0, np.inf, 0.0))
    ratio = np.where(bad_nan, np.inf, np.where(same, 0.0, ratio))
    worst = float(np.max(ratio)) if ratio.size else 0.0
    max_abs = float(np.max(np.where(np.isfinite(diff), diff, 0.0))) if diff.size else 0.0
    detail = f"{int(bad_nan.sum())} non-finite elements where the other is finite" if bad_nan.any() else ""
    status = "within_bound" if bool(np.all(diff[~same] <= bound[~same])) and not bad_nan.any() else "mismatch"
    return Pair(group, status, max_abs, worst, int((~same).sum()), a.size, detail)


# The float64 references a relation's bound needs (the batch of 7, the adjoint pair, the probes) are the same
# for every target that runs the case, and a lane judges one case on all its targets in a row: the last few
# cases' references are kept, by the case (equal cases draw equal inputs) and what they are.
_MEMO: OrderedDict[tuple, Any] = OrderedDict()
_MEMO_SIZE = 24
_MEMO_LOCK = threading.Lock()


def _memo(case: Case, what: str, make: Callable[[], Any]) -> Any:
    key = (case, what)  # equal cases draw equal inputs (from their seed)
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    value = make()
    with _MEMO_LOCK:
        _MEMO[key] = value
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return value


def _oracle(case: Case, inputs: Inputs) -> tuple[np.ndarray, np.ndarray, object]:
    ref = reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)
    return ref[0], ref[1], ref[2] if len(ref) > 2 else None


def _pair_bound_of(case: Case, oracle: tuple | None, rounding: str) -> np.ndarray | float:
    if case.quantized or oracle is None:
        return pair_bound(case, np.zeros(1), np.zeros(1), None, rounding)[0]
    return pair_bound(case, oracle[0], oracle[1], oracle[2] if len(oracle) > 2 else None, rounding)


def _unit(case: Case, oracle: tuple | None, power: int = 0) -> np.ndarray | float:
    """One rounding at each element (u_T * 2^power * scale): the measure of a difference where the bound is 0."""
    if case.quantized or oracle is None:
        return 1.0
    return UNIT_ROUNDOFF[case.dtype] * 2.0 ** power * np.asarray(oracle[1], dtype=np.float64)


def needed(relation: str, case: Case, runs: dict[str, Variant]) -> list[str]:
    """The runs a relation reads, `main` included."""
    keys = {
        "determinism": ["main", "again", "second"],
        "batch": ["main", *(batch_key(case, n) for n in batch_sizes(case)),
                  *(single_key(case, i) for i in range(min(max(batch_sizes(case)), 7)))],
        "threads": [k for n in thread_batches(case) for k in (batch_key(case, n), f"threads{n}")],
        "layout": ["main", "layout", *(["kernels"] if "kernels" in runs else [])],
        "scaling": ["main", *(k for k in runs if k.startswith("scale"))],
        "adjoint": [plain_key(case), "adjoint"],
        "subnormal": ["probe", *(k for k in runs if k.startswith("probe_")),
                      *([plain_key(case)] if "probe_scaled" in runs else [])],
    }[relation]
    return list(dict.fromkeys(keys))


def outcome(relation: str, case: Case, inputs: Inputs, oracle: tuple | None, runs: dict[str, Variant],
            outs: dict[str, np.ndarray], rounding: str = "half_to_even") -> Outcome:
    """The relation's verdict; `outs` holds the output of every run `needed` names."""
    pairs: list[Pair] = []
    facts: dict[str, str] = {}
    flushed = False
    main = outs.get("main")
    if relation == "determinism":
        bound = _pair_bound_of(case, oracle, rounding)
        unit = _unit(case, oracle)
        pairs += [compare("again", outs["again"], main, bound, unit),
                  compare("second process", outs["second"], main, bound, unit)]
    elif relation in ("batch", "threads"):
        big_n = max(7, case.batch, *thread_batches(case))
        big_case = with_batch(case, big_n)
        big_oracle = None if case.quantized else _memo(
            case, "batch", lambda: _oracle(big_case, batched_inputs(case, inputs, big_n)))
        bound, unit = _pair_bound_of(big_case, big_oracle, rounding), _unit(big_case, big_oracle)

        def rows(lo: int, hi: int, of: np.ndarray | float | None = None) -> np.ndarray | float:
            v = bound if of is None else of
            return v if np.isscalar(v) else np.asarray(v)[lo:hi]

        if relation == "batch":
            for n in batch_sizes(case):
                out_n = outs[batch_key(case, n)]
                pairs += [compare(f"b={n}", out_n[i:i + 1], outs[single_key(case, i)], rows(i, i + 1),
                                  rows(i, i + 1, unit)) for i in range(min(n, 7))]
        else:
            pairs += [compare(f"b={n}", outs[f"threads{n}"], outs[batch_key(case, n)], rows(0, n), rows(0, n, unit))
                      for n in thread_batches(case)]
    elif relation == "layout":  # the other layout, then each kernel variant's output (key kernels:<name>)
        bound, unit = _pair_bound_of(case, oracle, rounding), _unit(case, oracle)
        pairs.append(compare("other layout", to_layout(outs["layout"], case.channels_last), main, bound, unit))
        pairs += [compare(f"kernel variant {key.partition(':')[2]}", outs[key], main, bound, unit)
                  for key in sorted(k for k in outs if k.startswith("kernels:"))]
    elif relation == "scaling":
        assert oracle is not None
        for key in sorted((k for k in runs if k.startswith("scale")), key=lambda k: -runs[k].power):
            k = runs[key].power
            pairs.append(compare(f"k={k:+d}", outs[key], np.asarray(main, dtype=np.float64) * 2.0 ** k,
                                 scaling_bound(case, oracle[0], oracle[1], k), _unit(case, oracle, k)))
    elif relation == "adjoint":
        pairs.append(_adjoint(case, inputs, runs, outs))
    elif relation == "subnormal":
        flushed = _subnormal(case, inputs, runs, outs, pairs, facts)
    status = max((p.status for p in pairs if p.status in STATUS_ORDER), key=STATUS_ORDER.index, default="pass")
    peak = float(np.max(np.abs(np.asarray(main, dtype=np.float64)), initial=0.0)) if main is not None else 0.0
    return Outcome(status, pairs, facts, flushed and status == "mismatch", peak)


def _adjoint(case: Case, inputs: Inputs, runs: dict[str, Variant], outs: dict[str, np.ndarray]) -> Pair:
    """<y, A> against <B, x>: A the case's own linear map on x, B its partner's on y (relations.adjoint_partner)."""
    lin, partner = plain(case), runs["adjoint"]
    a, b = outs[plain_key(case)], outs["adjoint"]
    if a.shape != partner.inputs.x.shape or b.shape != inputs.x.shape:
        return Pair("<y, A> - <B, x>", "mismatch", float("inf"), float("inf"), 1, 1,
                    f"shapes {a.shape} and {b.shape} for {partner.inputs.x.shape} and {inputs.x.shape}")
    ref_a, scale_a = _memo(case, "plain", lambda: reference(lin, inputs.x, inputs.w, None)[:2])
    ref_b, scale_b = _memo(case, "adjoint", lambda: reference(partner.case, partner.inputs.x, partner.inputs.w, None)[:2])
    err_a, err_b = conv_bound(lin, ref_a, scale_a), conv_bound(partner.case, ref_b, scale_b)
    y64, x64 = partner.inputs.x.astype(np.float64), inputs.x.astype(np.float64)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    lhs, rhs = float(np.sum(y64 * a64)), float(np.sum(b64 * x64))
    bound = adjoint_bound(y64, a64, err_a, x64, b64, err_b)
    if not (np.isfinite(lhs) and np.isfinite(rhs)):
        return Pair("<y, A> - <B, x>", "mismatch", float("inf"), float("inf"), 1, 1, "non-finite inner product")
    if lhs == rhs:
        return Pair("<y, A> - <B, x>", "pass", total=1)
    diff = abs(lhs - rhs)
    ratio = diff / bound if bound > 0 else float("inf")
    return Pair("<y, A> - <B, x>", "within_bound" if ratio <= 1.0 else "mismatch", diff, ratio, 1, 1,
                f"<y, A> = {lhs:.9g}, <B, x> = {rhs:.9g}, {ratio:.3g} x bound")


def _flush_signature(a: np.ndarray, expected: np.ndarray, bad: np.ndarray, dtype: str) -> bool:
    """What flushing to zero leaves: the elements beyond the bound lost magnitude, and none of them is
    subnormal (a flushed result is zero or a normal number missing its subnormal terms)."""
    a64, e64 = np.abs(a.astype(np.float64)), np.abs(expected)
    return bool(bad.any()) and bool(np.all(a64[bad] < e64[bad])) and not bool(is_subnormal(a[bad], dtype).any())


def _subnormal(case: Case, inputs: Inputs, runs: dict[str, Variant], outs: dict[str, np.ndarray],
               pairs: list[Pair], facts: dict[str, str]) -> bool:
    """The targeted probes (relations.probe_shifts) and the scaled case data; facts and whether flushing
    explains every element beyond the bound."""
    probe = runs["probe"]
    ref0, scale0 = _memo(case, "probe", lambda: reference(probe.case, *probe_data(case), None)[:2])
    normal = np.asarray(outs["probe"], dtype=np.float64)
    explained, any_bad = True, False
    for name, (px, pw) in probe_shifts(case).items():
        a, shift = outs[f"probe_{name}"], px + pw
        expected = normal * 2.0 ** shift
        bound = subnormal_bound(probe.case, ref0, scale0, shift, on_grid=True)
        pair = compare(name, a, expected, bound, _unit(probe.case, (ref0, scale0), shift))
        pairs.append(pair)
        bad = _beyond(a, expected, bound) if pair.status == "mismatch" and not pair.detail else None
        if name == "input":
            facts["inputs"] = "kept" if pair.status != "mismatch" else "flushed" if bad is not None and \
                _flush_signature(a, expected, bad, case.dtype) else "wrong"
        else:  # every product is subnormal: outputs normal (products' fate) or subnormal (outputs' too)
            sub = is_subnormal(expected, case.dtype)
            for what, where in (("products", ~sub & (expected != 0)), ("outputs", sub)):
                if not where.any():
                    continue
                seen = "kept" if bad is None or not (bad & where).any() else \
                    "flushed" if _flush_signature(a, expected, bad & where, case.dtype) else "wrong"
                facts[what] = max(facts.get(what, "kept"), seen, key=("kept", "flushed", "wrong").index)
        if bad is not None:
            any_bad = True
            explained &= _flush_signature(a, expected, bad, case.dtype)
    if "probe_scaled" in outs:
        run = runs["probe_scaled"]
        lin = plain(case)
        k = run.power
        ref, scale = _memo(case, "plain", lambda: reference(lin, inputs.x, inputs.w, None)[:2])
        moved = _memo(case, "moved", lambda: reference(
            lin, np.abs(run.inputs.x.astype(np.float64) - inputs.x.astype(np.float64) * 2.0 ** k),
            np.abs(inputs.w.astype(np.float64)), None)[0])
        a = outs["probe_scaled"]
        expected = np.asarray(outs[plain_key(case)], dtype=np.float64) * 2.0 ** k
        bound = subnormal_bound(lin, ref, scale, k, moved)
        pair = compare(f"scaled k={k:+d}", a, expected, bound, _unit(lin, (ref, scale), k))
        pairs.append(pair)
        if pair.status == "mismatch" and not pair.detail:
            any_bad = True
            explained &= _flush_signature(a, expected, _beyond(a, expected, bound), case.dtype)
    return any_bad and explained


def _beyond(a: np.ndarray, expected: np.ndarray, bound: np.ndarray | float) -> np.ndarray:
    return np.abs(a.astype(np.float64) - expected) > bound
