"""The boundary foci of `convdiff fuzz` (harness/commands/fuzz/gen.py): moving a drawn config onto an edge of
a derived feature (harness/model/features.py, the names scope inference and known-issue selectors use).

`boundary` puts one axis, the channels, K, the dtype or the layout on the edge a focus names: an output length
of 1, a pad equal to the dilated kernel's reach d*(k-1) or one past it, output_padding of stride-1, of
stride or above it (where a larger dilation allows it), per-group channel ratios, accumulation lengths K around the
powers of two kernels are picked by (with half types half the time), channels-last with one channel, and as
many output channels as the last axis has outputs; a window that reads padding only (the first or the last
output of a forward conv, or, in a transposed conv, outputs no input reaches: a stride past the dilated kernel),
an input of length 1 with padding on that axis (a conv3d's depth half the time, with one input channel or one
per group a share of the time), and a 1x1 kernel with a stride over padding. `epilogue_fold`
gives a config the epilogue a converter or graph compiler folds into the conv or fuses into its kernel.
"""

from __future__ import annotations

import math
import random
from typing import Any

from harness.commands.fuzz.draw import DATA_KINDS, DTYPES, Draw, per_dim_lists
from harness.model.case import (
    EPILOGUE_ACTIVATIONS,
    EPILOGUE_CONSTANTS,
    EPILOGUE_OPS,
    QUANT_DTYPES,
    op_is_transpose,
    op_rank,
    resolve_geometry,
)

K_TARGETS = (8, 16, 32, 64, 128, 256)  # accumulation lengths around which kernels change (SIMD widths, blocks)
PADDED_FOCI = ("padding_window", "one_padded", "one_by_one_stride")  # foci that set explicit pads on one axis


def boundary(r: Draw, focus: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Move one drawn config onto the edge a boundary focus names (on one axis j, or its channels, K,
    dtype or layout); the loader's checks decide afterwards whether it stayed valid."""
    f = per_dim_lists(fields)
    rank, transpose = op_rank(f["op"]), op_is_transpose(f["op"])
    j = r.axis(rank)
    n, k, s, d = (f[name] for name in ("input_size", "kernel_size", "stride", "dilation"))
    if focus in ("out_one", "pad_reach", "outpad_stride", *PADDED_FOCI) and isinstance(f["padding"], str):
        f["padding"] = [[0, 0] for _ in range(rank)]
    pads, e = f.get("padding"), f["output_padding"]
    reach = d[j] * (k[j] - 1)
    if focus == "out_one" and not transpose:  # floor((n + pb + pa - reach - 1) / s) + 1 == 1
        s[j] = r.integers(1, 3)
        pads[j] = [r.integers(0, 1), r.integers(0, 1)]
        n[j] = max(1, reach + 1 - sum(pads[j]) + r.integers(0, s[j] - 1))
    elif focus == "out_one":  # (n-1)*s + reach + 1 + e - pb - pa == 1
        n[j], e[j] = r.integers(1, 2), 0
        crop = (n[j] - 1) * s[j] + reach
        pb = r.integers(0, crop)
        pads[j] = [pb, crop - pb]
    elif focus == "pad_reach":
        k[j] = max(k[j], 2)
        reach = d[j] * (k[j] - 1)
        side = r.integers(0, 1)
        pads[j][side] = reach + r.integers(0, 1)
        if not transpose:
            n[j] = max(n[j], 1)
        else:  # the crop must leave an output: lengthen the input until it does
            while (n[j] - 1) * s[j] + reach + 1 + e[j] - sum(pads[j]) < 1:
                n[j] += 1
    elif focus == "outpad_stride" and transpose:
        if r.booleans():
            s[j] = r.integers(2, 3)
            e[j] = s[j] - 1
        else:  # output_padding = stride or above, valid only where the dilation is larger still
            s[j] = r.integers(1, 2)
            d[j] = s[j] + r.integers(1, 2)
            e[j] = r.integers(s[j], d[j] - 1)
    elif focus == "group_ratio":
        g = r.integers(2, 4)
        cin, cout = r.sampled_from([(1, 2), (2, 1), (1, 3), (3, 2), (2, 3), (4, 1), (1, 4)])
        f.update(groups=g, in_channels=g * cin, out_channels=g * cout)
    elif focus == "long_sum":
        target = r.sampled_from(K_TARGETS) + r.integers(-1, 1)
        window = max(1, math.prod(k))
        per_group = max(1, min(64, round(target / window)))
        g = f.get("groups", 1)
        f.update(in_channels=per_group * g, out_channels=g * r.integers(1, 2))
        if r.booleans() and "quant" not in f:
            f["dtype"] = r.sampled_from(("float16", "bfloat16"))
    elif focus == "channels_last_one":
        f.update(layout="channels_last", groups=1)
        f["in_channels" if r.booleans() else "out_channels"] = 1
    elif focus == "channels_width":
        _channels_width(r, f, transpose)
    elif focus == "padding_window":
        _padding_window(r, f, j, transpose)
    elif focus == "one_padded":  # on any axis; a conv3d's depth half the time (kernels block depth apart)
        j = 0 if rank == 3 and r.booleans() else r.integers(0, rank - 1)
        k[j] = max(k[j], 2)
        reach = d[j] * (k[j] - 1)
        n[j], e[j] = 1, 0
        # conv: 1 + pb + pa >= reach + 1 leaves an output; transposed: the crop pb + pa <= reach does
        total = reach + r.integers(0, 1) if not transpose else r.integers(1, reach)
        pb = r.integers(1, total) if total >= 1 else 0
        pads[j] = [pb, total - pb]
        one = r.rnd.random()
        if one < 0.3 and f.get("groups", 1) == 1:  # one input channel: the whole input one padded plane
            f["in_channels"] = 1
        elif one < 0.5:  # one input channel per group, more outputs than groups: the grouped form of the same
            g = r.integers(2, 3)
            f.update(groups=g, in_channels=g, out_channels=g * r.integers(2, 3))
    elif focus == "one_by_one_stride":
        f["kernel_size"] = k = [1] * rank
        s[j] = r.integers(2, 3)
        pads[j] = [r.integers(0, 2), r.integers(0, 2)]
        if not any(pads[j]):
            pads[j][r.integers(0, 1)] = 1
        if transpose:  # the crop must leave an output
            e[j] = min(e[j], max(s[j], d[j]) - 1)
            n[j] = max(n[j], sum(pads[j]))
    if not transpose or not any(f["output_padding"]) or isinstance(f["padding"], str):
        f.pop("output_padding", None)
    return f


def epilogue_fold(q: random.Random, fields: dict[str, Any]) -> dict[str, Any]:
    """The config as a float conv (a quantized one loses its quantization) with an epilogue of 2-3 ops whose
    first is folded or fused into the conv, mostly without a bias of its own (the fold then makes one)."""
    f = {k: v for k, v in fields.items() if k not in ("quant", "epilogue")}
    if f["dtype"] in QUANT_DTYPES:
        f.update(dtype=q.choice(DTYPES), data=q.choice(DATA_KINDS))
    f["bias"] = q.random() < 0.25
    first = q.choice(EPILOGUE_CONSTANTS) if q.random() < 0.7 else q.choice(EPILOGUE_ACTIVATIONS)
    f["epilogue"] = [first, *(q.choice(EPILOGUE_OPS) for _ in range(q.randint(1, 2)))]
    return f


def _channels_width(r: Draw, f: dict[str, Any], transpose: bool) -> None:
    """As many output channels as the last axis has outputs, with a per-channel vector (bias, or a `shift`
    epilogue) that broadcasts along either axis alike: where an implementation guesses the channel axis by
    its length, only this case tells the two apart."""
    n, k, s, d, e = (f[name] for name in ("input_size", "kernel_size", "stride", "dilation", "output_padding"))
    pads = f["padding"] if isinstance(f["padding"], str) else tuple(tuple(p) for p in f["padding"])
    width = 0
    for _ in range(8):  # lengthen the last axis' input until it has at least two outputs
        width = resolve_geometry(transpose, tuple(n), tuple(k), tuple(s), pads, tuple(e) if transpose else (),
                                 tuple(d)).out_size[-1]
        if width >= 2:
            break
        n[-1] += 1
    g = f.get("groups", 1)
    f.update(out_channels=width, groups=g if width % g == 0 else 1)
    if "quant" not in f and r.booleans():
        f["epilogue"] = ["shift", *(x for x in f.get("epilogue", []) if x != "shift")]
    else:
        f["bias"] = True


def window_taps(n: int, k: int, s: int, d: int, pb: int, pa: int, last: bool) -> int | None:
    """How many input elements the first (or last) window of a forward conv's axis reads; None when the axis
    has no output."""
    o = (n + pb + pa - d * (k - 1) - 1) // s + 1
    if o < 1:
        return None
    start = (o - 1) * s - pb if last else -pb
    return sum(0 <= start + t * d < n for t in range(k))


def _padding_window(r: Draw, f: dict[str, Any], j: int, transpose: bool) -> None:
    """Axis j of a forward conv gets a first or last window (the last more often: where the entries' `[-1]`
    features look) that reads padding only, mostly as the axis' only output; a transposed conv gets a
    stride past its dilated kernel, so that some outputs are reached by no input (the bias only)."""
    n, k, s, d, pads = (f[name] for name in ("input_size", "kernel_size", "stride", "dilation", "padding"))
    if transpose:
        k[j] = r.integers(1, 2)
        s[j] = d[j] * (k[j] - 1) + 1 + r.integers(1, 2)
        pads[j] = [0, 0]
        n[j] = max(n[j], 2)
        return
    if r.rnd.random() < 0.5:
        j = len(n) - 1  # the last axis three times in four (with r.axis's half)
    last, single = r.rnd.random() < 0.7, r.rnd.random() < 0.7
    for _ in range(64):
        nn, kk, ss, dd = r.integers(1, 4), r.integers(2, 3), r.integers(1, 3), r.integers(1, 3)
        reach = dd * (kk - 1)
        pb, pa = r.integers(0, reach + 1), r.integers(0, reach + 1)
        o = (nn + pb + pa - reach - 1) // ss + 1
        if window_taps(nn, kk, ss, dd, pb, pa, last) == 0 and (o == 1 or not single):
            n[j], k[j], s[j], d[j], pads[j] = nn, kk, ss, dd, [pb, pa]
            break
    else:
        return
    # half the time another axis is padded before as well: an int8 kernel corrects its zero-point term per
    # padded window, and a padding-only axis beside a padded one takes another branch than alone
    others = [i for i in range(len(n)) if i != j and not pads[i][0]]
    if others and r.booleans():
        i = r.sampled_from(others)
        pads[i][0] = r.integers(1, max(1, d[i] * (k[i] - 1)))
