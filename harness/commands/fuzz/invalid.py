"""Invalid configurations for `convdiff fuzz`: a drawn valid config turned into one of the schema's invalid forms.

The classes are what the validator (harness/model/validity.py) flags and an `expect: invalid` case may state
(ARCHITECTURE.md): an output length of 0 exactly (the window just misses; a transposed conv cropped to
nothing) and below it (the kernel reaching past the padded input), groups not dividing the channels,
output_padding at or above max(stride, dilation), a stride, dilation or groups of 0 or below, a negative
pad, and tensors of differing dtypes (an integer, complex or other float input, weight or bias). Each one
changes one axis or one field; the other axes stay valid, so that a framework's refusal, or its failure to
refuse, is about that one thing.

Not among them: output_padding with padding same/valid. The validator refuses it because the canonical
semantics leave it undefined, but frameworks define it their own way (Keras accepts it; an adapter that states
SAME as explicit pads hands torch a valid call), so no backend could be expected to reject it: every result
would be a false accepted_invalid.
"""

from __future__ import annotations

from typing import Any

from harness.commands.fuzz.draw import PER_AXIS, Draw, per_dim_lists
from harness.model.case import COMPLEX_DTYPES, FLOAT_DTYPES, INTEGER_DTYPES, QUANT_DTYPES, op_is_transpose, op_rank
from harness.model.schema import CaseModel

# (class, weight): the classes every op can have; output_padding_ge_max only transposed convs can.
# Mixed dtypes and a stride or dilation of 0 or below weigh more: each has a combination space of its own (which
# tensor, which dtype; which axis, 0 or negative, forward or transposed) where the frameworks' checks differ.
CONV_INVALID = (("empty_output", 4), ("kernel_reach", 1), ("groups_not_dividing", 2), ("stride_nonpositive", 3),
                ("dilation_nonpositive", 3), ("groups_nonpositive", 2), ("negative_padding", 2), ("mixed_dtypes", 4))
TRANSPOSE_INVALID = (("output_padding_ge_max", 4),)
INVALID_CLASSES = tuple(name for name, _ in (*CONV_INVALID, *TRANSPOSE_INVALID))
# Invalid numbers the schema refuses (sizes, and stride or dilation below 1 where it bounds them): an input
# error for any case, even one marked `expect: invalid`, so no backend is ever asked to run them.
SCHEMA_INVALID_CLASSES = ("zero_size", "negative_size", *(f"{name}_zero" for name in ("stride", "dilation")
                                                          if any(hasattr(m, "ge") for m in CaseModel.model_fields[name].metadata)))


def _explicit(f: dict[str, Any], rank: int) -> list[list[int]]:
    """The config's pads as pairs, a padding mode replaced by zeros (output_padding needs explicit pads)."""
    if isinstance(f["padding"], str):
        f["padding"] = [[0, 0] for _ in range(rank)]
    return f["padding"]


def _empty_output(r: Draw, f: dict[str, Any], j: int, transpose: bool) -> None:
    """Axis j's output length exactly 0, the other axes as drawn."""
    n, k, s, d, e = (f[name] for name in PER_AXIS)
    symmetric = r.weighted((True, 3), (False, 1))  # as most frameworks take their pads (torch: one per axis)
    if transpose:  # (n-1)*s + d*(k-1) + 1 + e - pb - pa == 0: the crop takes the whole output
        pads = _explicit(f, len(n))
        crop = (n[j] - 1) * s[j] + d[j] * (k[j] - 1) + 1 + e[j]
        if symmetric and crop % 2:  # an even crop: output_padding one more or less, or an odd-reaching kernel
            if e[j] + 1 < max(s[j], d[j]):
                e[j] += 1
            elif e[j] > 0:
                e[j] -= 1
            elif d[j] % 2:
                k[j] += 1
            crop = (n[j] - 1) * s[j] + d[j] * (k[j] - 1) + 1 + e[j]
        before = crop // 2 if symmetric else r.integers(0, crop)
        pads[j] = [before, crop - before]
        return
    # floor((n + pb + pa - d*(k-1) - 1) / s) + 1 == 0: the dilated kernel passes the padded input by 1..s
    if isinstance(f["padding"], str) and r.booleans():
        f["padding"], before, after = "valid", 0, 0
    else:
        pads = _explicit(f, len(n))
        before = r.weighted((0, 3), (1, 1))
        after = before if symmetric else r.weighted((0, 3), (1, 1))
        pads[j] = [before, after]
    short = r.integers(1, s[j])
    while d[j] * (k[j] - 1) + 1 - short - before - after < 1:
        k[j] += 1
    n[j] = d[j] * (k[j] - 1) + 1 - short - before - after


def _mixed_dtypes(r: Draw, f: dict[str, Any]) -> None:
    """One tensor (input, weight or bias) of another dtype than the others; a quantized config becomes a float
    one first (its tensors' dtypes are fixed)."""
    if f.get("dtype") in QUANT_DTYPES:
        f.pop("quant", None)
        f["dtype"] = r.sampled_from(FLOAT_DTYPES)
    tensor = r.sampled_from(("input_dtype", "weight_dtype", "bias_dtype"))
    if tensor == "bias_dtype":
        f["bias"] = True
    kind = r.weighted((FLOAT_DTYPES, 3), (INTEGER_DTYPES, 1), (COMPLEX_DTYPES, 1))
    f[tensor] = r.sampled_from([t for t in kind if t != f.get("dtype", "float32")])


def invalid_fields(r: Draw, f: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(class, the config turned into one of INVALID_CLASSES, with `expect: invalid`)."""
    rank, transpose = op_rank(f["op"]), op_is_transpose(f["op"])
    cls = r.weighted(*CONV_INVALID, *(TRANSPOSE_INVALID if transpose else ()))
    f = per_dim_lists(f)
    n, k, s, d, e = (f[name] for name in PER_AXIS)
    j = r.axis(rank)
    if cls == "empty_output":
        _empty_output(r, f, j, transpose)
    elif cls == "kernel_reach" and not transpose:  # the dilated kernel reaches past the padded input
        f["padding"] = r.sampled_from(["valid", [[0, 0]] * rank])
        k[j] = n[j] // d[j] + r.integers(1, 2)
    elif cls == "kernel_reach":  # the crop removes the whole transposed output and more
        full = (n[j] - 1) * s[j] + d[j] * (k[j] - 1) + 1
        pads = [[0, 0] for _ in range(rank)]
        pads[j] = [full // 2 + r.integers(0, 1), full - full // 2]
        f["padding"], f["output_padding"] = pads, [0] * rank
    elif cls == "groups_not_dividing":
        g = r.integers(2, 3)
        f["groups"] = g
        # A transposed conv's weight (C_in, C_out/g, *k) cannot even state an indivisible C_out to a
        # functional API (it reads C_out/g off the weight): only an indivisible C_in is a real test there.
        name = "in_channels" if transpose else r.sampled_from(("in_channels", "out_channels"))
        f["in_channels"], f["out_channels"] = g * r.integers(1, 2), g * r.integers(1, 2)
        f[name] += r.integers(1, g - 1)
    elif cls in ("stride_nonpositive", "dilation_nonpositive"):
        (s if cls == "stride_nonpositive" else d)[j] = r.weighted((0, 1), (-1, 1))
    elif cls == "groups_nonpositive":
        f["groups"] = r.weighted((0, 2), (-1, 1))
    elif cls == "negative_padding":
        pads = _explicit(f, rank)
        amount = -r.integers(1, 2)
        pads[j] = [amount, amount] if r.booleans() else [pads[j][0], amount] if r.booleans() else [amount, pads[j][1]]
    elif cls == "mixed_dtypes":
        _mixed_dtypes(r, f)
    else:  # output_padding_ge_max
        e[j] = max(s[j], d[j]) + r.integers(0, 1)
        _explicit(f, rank)
    if not transpose or not any(f["output_padding"]) or isinstance(f["padding"], str):
        f.pop("output_padding", None)
    return cls, {**f, "expect": "invalid"}


def schema_invalid_fields(r: Draw, f: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(class, a config the schema refuses: a size of 0 or below, ...), with `expect: invalid`."""
    cls = r.sampled_from(SCHEMA_INVALID_CLASSES)
    f = dict(f)
    name = {"stride_zero": "stride", "dilation_zero": "dilation"}.get(cls) or r.sampled_from(
        ("input_size", "kernel_size", "in_channels", "out_channels", "batch"))
    f[name] = -r.integers(1, 3) if cls == "negative_size" else 0
    return cls, {**f, "expect": "invalid"}
