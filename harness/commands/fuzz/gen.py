"""Case generation for `convdiff fuzz`: seeded draws over the case schema.

The value sets come from the schema itself (the `Literal` fields and `ge` bounds of
`schema.CaseModel`, the padding modes of `case.py`); what this module adds is the
conv structure (one draw per spatial dim, channel counts that groups divide) and a
bias toward the corners where convolution bugs live: one dim of every case is drawn
from a *focus* (L % s != 0, k < s, d > s, odd SAME totals, output_padding at its
maximum, groups == channels, kernel longer than the input, sizes of 1, long kernels).
The boundary foci put a case on an edge of a derived feature (harness/model/features.py, the
names scope inference and known-issue selectors use): an output length of 1, a pad equal to the
dilated kernel's reach d*(k-1) or one past it, output_padding of stride-1, of stride or above it
(where a larger dilation allows it), per-group channel ratios, accumulation lengths K around the
powers of two kernels are picked by (with half types half the time), channels-last with one
channel, as many output channels as the last axis has outputs (a bias or shift that broadcasts
along either), a window that reads padding only, an input of length 1 with padding, and a strided 1x1
kernel over padding. Half the `plain` configs become `epilogue_fold`: float, mostly without a bias, with an
epilogue of two or three ops whose first is one a converter or graph compiler folds into the conv (a
constant: scale, divide, shift, a scalar, batch norm) or fuses into its kernel (an activation): the
pattern-matching passes that rewrite weights and bias. A share of the boundary configs (SECOND_SHARE) are
moved onto a second boundary as well, often on another axis: a one-channel channels-last conv whose last
output is 1, a group ratio with a long sum; the case keeps the first focus as its tag. harness/commands/fuzz/invalid.py turns a share of the configs into the schema's
invalid forms, half of them from a plain base (float32 or float64, or per-tensor quantized, channels-first, the
same pad on both sides, no epilogue), so that what makes them invalid is the only reason to refuse them;
harness/commands/fuzz/steer.py draws the neighbours of failures on top of these.

Every config is drawn from its own `random.Random(f"{seed}:{index}:{attempt}")` (the
small `Draw` of draw.py: integers, choices, weighted choices), so the same seed gives the same
configs in the same order on every machine, and each one can be regenerated alone.
Hypothesis is not used here: its public API shrinks failing tests but has no seeded,
streaming draw, and its internal one changes between releases. Each config goes through the loader's
own checks (`schema.validate_fields` + `validity.canonical_case`): a config meant to
be valid that is not, or an invalid one that is, is drawn again.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from harness.commands.fuzz.boundary import PADDED_FOCI, boundary, epilogue_fold
from harness.commands.fuzz.draw import (
    DATA_KINDS,
    DTYPES,
    LAYOUTS,
    OPS,
    QUANT_RANGES,
    Draw,
    minimum,
    per_dim_lists,
)
from harness.commands.fuzz.invalid import (  # noqa: F401 - the classes, re-exported for callers of gen
    INVALID_CLASSES,
    SCHEMA_INVALID_CLASSES,
    invalid_fields,
    schema_invalid_fields,
)
from harness.model.case import (
    EPILOGUE_CONSTANTS,
    EPILOGUE_OPS,
    PADDING_MODES,
    QUANT_DTYPES,
    Case,
    op_is_transpose,
    op_rank,
)
from harness.model.schema import validate_fields
from harness.model.validity import ShapeError, canonical_case

FOCI = ("plain", "stride_remainder", "short_kernel", "dilation_over_stride", "same_odd", "outpad_max",
        "depthwise", "kernel_over_input", "size_one", "long_kernel",
        # the boundaries of the derived features (the module doc)
        "out_one", "pad_reach", "outpad_stride", "group_ratio", "long_sum", "channels_last_one", "channels_width",
        "padding_window", "one_padded", "one_by_one_stride")
BOUNDARY_FOCI = FOCI[10:]
SECOND_SHARE = 0.5  # of the boundary configs: on a second boundary too (bugs sit on conjunctions of two)
FOLD_SHARE = 0.5  # of the `plain` configs: `epilogue_fold` (drawn from a stream of its own: the rest stay as drawn)
PADDING_FORMS = ("int", "per_dim", "pairs", *PADDING_MODES)
MAX_ATTEMPTS = 50
EPILOGUE_SHARE, EPILOGUE_SHARE_FOLDED = 0.25, 0.45  # about 40% of valid configs in all
QUANT_SHARE = 0.15  # of valid configs: quantized (uint8/int8, per-tensor or per-channel, full or narrow)
# The padded-window foci quantize more of their configs: an int8 kernel that pads with zeros must correct
# its zero-point term for the taps that read padding, a separate code path for every window that reaches
# into it, and the path the int8 entries of cases/known_issues.yaml on padding-only windows and strided
# 1x1 convs break on.
EDGE_QUANT_SHARE = 0.4  # of the configs of boundary.PADDED_FOCI
SCHEMA_INVALID_SHARE = 0.2  # of the invalid configs: few, since they only prove the loader refuses them
# of the invalid configs: on a plain base (plain_base): with a quantized per-channel transposed conv, an
# asymmetric pad or a float16 conv on a framework without its kernel, the case is refused for that first
CLEAN_INVALID_SHARE = 0.5

# Small enough for milliseconds per case on every backend (per rank: input length, kernel length).
MAX_INPUT = {1: 12, 2: 8, 3: 5}
MAX_KERNEL = {1: 5, 2: 4, 3: 3}
LONG_KERNEL = 7  # the conv3d_transpose drift class appears at k = 7




@dataclass(frozen=True)
class Config:
    """One generated case: its YAML fields, and the canonical Case (None when the schema refuses it)."""

    index: int
    fields: dict[str, Any]
    case: Case | None
    kind: str  # valid | invalid | schema_invalid
    focus: str  # the focus (valid), or the invalid class


def _dims(r: Draw, rank: int, transpose: bool, focus: str) -> dict[str, list]:
    ksz = MAX_KERNEL[rank]
    L = [r.integers(1, MAX_INPUT[rank]) for _ in range(rank)]
    k = [r.integers(1, ksz) for _ in range(rank)]
    s = [r.weighted((1, 3), (2, 3), (3, 1)) for _ in range(rank)]
    d = [r.weighted((1, 5), (2, 2), (3, 1)) for _ in range(rank)]
    j = r.axis(rank)  # the dim the focus shapes
    if focus == "stride_remainder":
        s[j] = r.integers(2, 3)
        L[j] = s[j] * r.integers(0, MAX_INPUT[rank] // s[j] - 1) + r.integers(1, s[j] - 1)
    elif focus == "short_kernel":  # up to stride 4: SAME then pads a negative total of 2 or more (k=1, n%4 == 0)
        s[j], d[j] = r.integers(2, 4), 1
        k[j] = r.integers(1, s[j] - 1)
    elif focus == "dilation_over_stride":
        d[j] = r.integers(2, 3)
        s[j] = r.integers(1, d[j] - 1)
    elif focus == "same_odd":  # SAME total odd: conv pads ke - 1 at stride 1; transpose crops ke - s
        d[j] = 1
        if transpose:
            s[j] = r.integers(1, 2)
            k[j] = s[j] + 2 * r.integers(0, (ksz - s[j] - 1) // 2) + 1
        else:
            s[j], k[j] = 1, r.sampled_from([2, 4] if ksz >= 4 else [2])
    elif focus == "kernel_over_input":
        L[j] = r.integers(1, 3)
        k[j] = r.integers(L[j] + 1, L[j] + 3)
    elif focus == "size_one":
        L = [1 if r.booleans() else v for v in L]
        k = [1 if r.booleans() else v for v in k]
        L[j], k[j] = 1, 1 if r.booleans() else k[j]
    elif focus == "long_kernel":
        k[j], d[j] = LONG_KERNEL, 1
        L[j] = r.integers(1, LONG_KERNEL + 2)
    elif focus == "outpad_max" and max(s[j], d[j]) < 2:
        s[j] = 2
    return {"input_size": L, "kernel_size": k, "stride": s, "dilation": d, "j": [j]}


def _per_dim(r: Draw, values: list[int]) -> int | list[int]:
    """An int when every dim agrees (sometimes), else one value per dim: both schema forms."""
    return values[0] if len(set(values)) == 1 and r.booleans() else list(values)


def _padding(r: Draw, form: str, dims: dict[str, list], transpose: bool) -> Any:
    if form in PADDING_MODES:
        return form
    reach = [dd * (kk - 1) + 1 for kk, dd in zip(dims["kernel_size"], dims["dilation"])]
    pairs = []
    for n, ke, s in zip(dims["input_size"], reach, dims["stride"]):
        # conv: enough to cover a kernel longer than the input; transpose: less than the full output
        top = ke - 1 if not transpose else max(min(ke - 1, (n - 1) * s + ke - 1) // 2, 0)
        if not transpose and n < ke:
            low = (ke - n + 1) // 2
            pairs.append([r.integers(low, max(low, top)) for _ in range(2)])
        else:
            pairs.append([r.integers(0, top) for _ in range(2)])
    if form == "pairs":
        return pairs
    sym = [p[0] for p in pairs]
    return sym[0] if form == "int" else sym


def _channels(r: Draw, focus: str) -> tuple[int, int, int]:
    cmin = minimum("in_channels")
    if focus == "depthwise":
        c = r.integers(max(cmin, 1), 4)
        return c, c * r.weighted((1, 3), (2, 1)), c
    g = r.weighted((minimum("groups"), 4), (2, 2), (3, 1))
    return g * r.integers(cmin, 3), g * r.integers(cmin, 3), g


def valid_fields(r: Draw, focus: str | None = None, op: str | None = None) -> tuple[str, dict[str, Any]]:
    """(focus, one config meant to be a valid convolution in YAML spelling, without id/seed); `op`: this op
    rather than a drawn one (the draws after it stay the same)."""
    callers_focus = focus is not None
    drawn = r.sampled_from(OPS)
    op = op or drawn
    rank, transpose = op_rank(op), op_is_transpose(op)
    focus = focus or r.sampled_from(FOCI)
    if focus == "plain" and not callers_focus and random.Random(f"{r.key}:fold").random() < FOLD_SHARE:
        _, base = valid_fields(r, "plain", op)
        return "epilogue_fold", epilogue_fold(random.Random(f"{r.key}:fold-ops"), base)
    if focus in BOUNDARY_FOCI:
        _, base = valid_fields(r, "plain", op)
        second = random.Random(f"{r.key}:second")  # a stream of its own: the single-boundary configs stay as drawn
        if not callers_focus and second.random() < SECOND_SHARE:  # the other edge first: the focus's own is kept
            other = second.choice([b for b in BOUNDARY_FOCI if b != focus])
            base = boundary(Draw(f"{r.key}:second:{other}"), other, base)
        moved = boundary(r, focus, base)
        return focus, _quantized(r, moved, EDGE_QUANT_SHARE) if focus in PADDED_FOCI else moved
    dims = _dims(r, rank, transpose, focus)
    j = dims.pop("j")[0]
    if focus == "same_odd":
        form = "same"
    elif focus == "outpad_max" and transpose:
        form = r.sampled_from(PADDING_FORMS[:3])
    elif focus == "kernel_over_input":
        form = r.sampled_from(("pairs", "per_dim", "same"))
    else:
        form = r.sampled_from(PADDING_FORMS)
    c_in, c_out, groups = _channels(r, focus)
    fields: dict[str, Any] = {
        "op": op, "batch": r.weighted((minimum("batch"), 3), (2, 2), (3, 1)),
        "in_channels": c_in, "out_channels": c_out, "groups": groups,
        **{name: _per_dim(r, v) for name, v in dims.items()},
        "padding": _padding(r, form, dims, transpose),
        "bias": r.booleans(), "layout": r.sampled_from(LAYOUTS),
        "dtype": r.sampled_from(DTYPES), "data": r.sampled_from(DATA_KINDS),
    }
    if transpose and form not in PADDING_MODES:
        top = [max(s, d) - 1 for s, d in zip(dims["stride"], dims["dilation"])]
        pads = [r.integers(0, t) for t in top]
        if focus == "outpad_max":
            pads[j] = top[j]
        if any(pads):
            fields["output_padding"] = _per_dim(r, pads)
    epilogue = draw_epilogue(r, transpose or groups > 1)
    if epilogue:
        fields["epilogue"] = epilogue
    return focus, _quantized(r, fields)


def _quantized(r: Draw, fields: dict[str, Any], share: float = QUANT_SHARE) -> dict[str, Any]:
    """`share` of the configs become quantized: the same geometry in uint8 or int8 (no epilogue:
    the requantization is its epilogue). Drawn from a stream of its own, so a config that stays float
    is the one the seed drew before quantized configs existed; with a larger share, every config the
    smaller one quantized is quantized alike."""
    if fields.get("dtype") in QUANT_DTYPES:
        return fields
    q = random.Random(f"{r.key}:quant")
    if q.random() >= share:
        return fields
    out = {k: v for k, v in fields.items() if k not in ("epilogue", "data")}
    out["dtype"] = q.choice(QUANT_DTYPES)
    out["quant"] = {"per_channel": q.random() < 0.5, "range": q.choice(QUANT_RANGES)}
    return out


def draw_epilogue(r: Draw, folded: bool) -> list[str]:
    """An epilogue for EPILOGUE_SHARE of the configs (more after transposed and grouped convs, where a
    fold must pick the right weight axis), 1-3 ops, constants first more often than not."""
    if r.rnd.random() >= (EPILOGUE_SHARE_FOLDED if folded else EPILOGUE_SHARE):
        return []
    ops = []
    if r.rnd.random() < 0.7:
        ops.append(r.sampled_from(EPILOGUE_CONSTANTS))
    for _ in range(r.integers(0 if ops else 1, 2)):
        ops.append(r.sampled_from(EPILOGUE_OPS))
    return ops


def plain_base(q: random.Random, fields: dict[str, Any]) -> dict[str, Any]:
    """A valid config reduced to what every framework runs: float32 (or float64), or a per-tensor quantized
    one; channels-first; the same pad on both sides of each axis; no epilogue. The base of CLEAN_INVALID_SHARE
    of the invalid configs, so that the one invalid thing is the only reason to refuse them."""
    f = {k: v for k, v in per_dim_lists(fields).items() if k != "epilogue"}
    if f["dtype"] in QUANT_DTYPES:
        f["quant"] = {**f["quant"], "per_channel": False}
    else:
        f["dtype"] = "float32" if q.random() < 0.75 else "float64"
    f["layout"] = "channels_first"
    if not isinstance(f["padding"], str):
        f["padding"] = [[min(p), min(p)] for p in f["padding"]]
    return f


def config_fields(r: Draw, kind: str, op: str | None = None) -> tuple[str, dict[str, Any]]:
    """(focus or invalid class, fields) for a config of `kind` (valid, invalid, schema_invalid); `op`: this op."""
    focus, base = valid_fields(r, op=op)
    if kind == "schema_invalid":
        return schema_invalid_fields(r, base)
    if kind == "invalid":
        clean = random.Random(f"{r.key}:clean")  # a stream of its own: the other invalid configs stay as drawn
        return invalid_fields(r, plain_base(clean, base) if clean.random() < CLEAN_INVALID_SHARE else base)
    return focus, base  # gradients: config_at, where the built case says whether it judges them


def _kind(seed: int, index: int, invalid_rate: float, gradient_share: float) -> tuple[str, bool]:
    """Valid or which invalid kind, and gradients: exact shares, from a plain seeded draw
    kept apart from the config draws, so that the shares hold whatever a config draws."""
    rnd = random.Random(f"{seed}:{index}:kind")
    u, g = rnd.random(), rnd.random()
    if u < invalid_rate:
        return ("schema_invalid" if u < invalid_rate * SCHEMA_INVALID_SHARE else "invalid"), False
    return "valid", g < gradient_share


def build_config(index: int, seed: int, kind: str, focus: str, fields: dict[str, Any], file: str,
           name: str | None = None) -> Config | None:
    """The Config if the loader's checks agree with what it was meant to be, else None. `name`: its id (and
    the key of its data seed) instead of fuzz_<seed>_<index>."""
    key = f"{name}:data" if name else f"{seed}:{index}:data"
    fields = {"id": name or f"fuzz_{seed}_{index}", **{k: v for k, v in fields.items() if k not in ("id", "seed", "tags")},
              "seed": random.Random(key).getrandbits(31), "tags": ["fuzz", *([focus] if focus else [])]}
    if kind == "invalid":  # the case says what it is, whatever its source's fields said (a neighbour of a valid one)
        fields["expect"] = "invalid"
    elif kind == "valid" and fields.get("expect") == "invalid":
        del fields["expect"]
    model, problem = validate_fields(fields)
    if kind == "schema_invalid":
        return Config(index, fields, None, kind, focus) if problem else None
    if problem or model is None:
        return None
    try:
        case, problems = canonical_case(model, model.id, file, 0)
    except (ValueError, ShapeError):
        return None
    if bool(problems) != (kind == "invalid"):
        return None
    return Config(index, fields, case, kind, focus)


def config_at(seed: int, index: int, invalid_rate: float = 0.2, gradient_share: float = 0.0,
              file: str = "fuzz-cases.yaml") -> Config:
    """The index-th config of a seed: the same on every call and every machine. `gradient_share`: of the valid
    configs that can judge gradients (no epilogue, not quantized: Case.gradient_outputs), the share that does;
    the flag on one that cannot would judge nothing (30% of all valid configs flagged left 373 of 626 flags
    judging no gradient, seed 17, 2026-12-01). Such configs are 44-47% of the valid ones (seeds 3, 7 and 17), so
    a share of 0.65 gives about 30% of the valid configs a gradient."""
    kind, gradients = _kind(seed, index, invalid_rate, gradient_share)
    for attempt in range(MAX_ATTEMPTS):
        focus, fields = config_fields(Draw(f"{seed}:{index}:{attempt}"), kind)
        built = build_config(index, seed, kind, focus, fields, file)
        if built is None:
            continue
        if gradients and built.case is not None and replace(built.case, gradients=True).gradient_outputs:
            return build_config(index, seed, kind, focus, {**fields, "gradients": True}, file) or built
        return built
    raise RuntimeError(f"no config for seed {seed} index {index} in {MAX_ATTEMPTS} attempts")


def generate(seed: int, invalid_rate: float = 0.2, gradient_share: float = 0.0, start: int = 0,
             file: str = "fuzz-cases.yaml") -> Iterator[Config]:
    """Configs seed:start, seed:start+1, ... without end."""
    index = start
    while True:
        yield config_at(seed, index, invalid_rate, gradient_share, file)
        index += 1
