"""Does a schema-valid case describe a real convolution? Canonicalise it, list what is wrong."""

from __future__ import annotations

import zlib

from harness.model.case import (
    COMPLEX_DTYPES,
    INTEGER_DTYPES,
    QUANT_DTYPES,
    Case,
    Pairs,
    Quant,
    op_is_transpose,
    op_rank,
    resolve_geometry,
)
from harness.model.schema import CaseModel, QuantModel


class ShapeError(Exception):
    """A case no backend could even be asked to run (e.g. a list whose length does not match
    the op's rank): an input error even when the case expects to be invalid."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field, self.problem = field, problem


def _per_dim(name: str, value, rank: int, op: str) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * rank
    if len(value) != rank:
        raise ShapeError(name, f"expected {rank} value{'s' if rank > 1 else ''} for {op}, got {len(value)}")
    return tuple(value)


def _padding(value, rank: int, op: str):
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return ((value, value),) * rank
    if isinstance(value[0], tuple):
        if len(value) != rank:
            raise ShapeError("padding", f"expected {rank} [before, after] pair{'s' if rank > 1 else ''} for {op}, got {len(value)}")
        return tuple(value)
    return tuple((p, p) for p in _per_dim("padding", value, rank, op))


def default_seed(case_id: str) -> int:
    """Stable seed from the case id, so a case's data never depends on its neighbours."""
    return zlib.crc32(case_id.encode()) & 0x7FFFFFFF


QUANT_LIMITS = {"uint8": (0, 255), "int8": (-128, 127)}


def _quant(m: CaseModel) -> Quant | None:
    """The canonical `quant:` of a quantized case; ShapeError where it makes no sense."""
    if m.dtype not in QUANT_DTYPES:
        if m.quant is not None:
            raise ShapeError("quant", f"only quantized dtypes ({', '.join(QUANT_DTYPES)}) take quant:, not {m.dtype}")
        return None
    if m.epilogue:
        raise ShapeError("epilogue", "a quantized case has no epilogue (the requantization is its epilogue)")
    q = m.quant or QuantModel()
    lo, hi = QUANT_LIMITS[m.dtype]
    for name in ("x_zero_point", "y_zero_point"):
        v = getattr(q, name)
        if v is not None and not lo <= v <= hi:
            raise ShapeError(f"quant[{name}]", f"must be within {m.dtype}'s range [{lo}, {hi}], got {v}")
    if q.w_zero_point is not None and not -128 <= q.w_zero_point <= 127:
        raise ShapeError("quant[w_zero_point]", f"must be within int8's range [-128, 127], got {q.w_zero_point}")
    w_scale = q.w_scale
    if isinstance(w_scale, list):
        if not q.per_channel:
            raise ShapeError("quant[w_scale]", "a list of scales needs per_channel: true")
        if len(w_scale) != m.out_channels:
            raise ShapeError("quant[w_scale]", f"per-channel: needs one scale per output channel ({m.out_channels}), "
                                              f"got {len(w_scale)}")
        w_scale = tuple(w_scale)
    return Quant(per_channel=q.per_channel, range=q.range, x_scale=q.x_scale, x_zero_point=q.x_zero_point,
                 w_scale=w_scale, w_zero_point=q.w_zero_point, y_scale=q.y_scale, y_zero_point=q.y_zero_point)


Problems = list[tuple[str, str]]


def _value_problems(stride: tuple[int, ...], dilation: tuple[int, ...], padding: Pairs | str, groups: int) -> Problems:
    """Values no convolution has (torch's error inputs: zero or negative stride, dilation or groups, negative
    padding): the case is then invalid, and has no geometry to resolve."""
    out: Problems = []
    for name, values in (("stride", stride), ("dilation", dilation)):
        bad = [v for v in values if v < 1]
        if bad:
            out.append((name, f"must be >= 1, got {bad[0]}"))
    bad = [] if isinstance(padding, str) else [v for pair in padding for v in pair if v < 0]
    if bad:
        out.append(("padding", f"must be >= 0, got {bad[0]}"))
    if groups < 1:
        out.append(("groups", f"must be >= 1, got {groups}"))
    return out


def _weight_problems(m: CaseModel, rank: int, kernel: tuple[int, ...]) -> Problems:
    """A stated `weight_shape` against the op and the input: another rank, or channel counts that do not match
    (problems); kernel_size or the output channels contradicting it (ShapeError: the case would be another)."""
    if m.weight_shape is None:
        return []
    ws, transpose = tuple(m.weight_shape), op_is_transpose(m.op)
    if len(ws) != rank + 2:
        return [("weight_shape", f"is {len(ws)}-D; {m.op} takes a {rank + 2}-D weight")]
    if ws[2:] != kernel:
        raise ShapeError("kernel_size", f"{list(kernel)} contradicts weight_shape's kernel {list(ws[2:])}")
    g = m.groups
    if transpose:
        if g >= 1 and ws[1] * g != m.out_channels:
            raise ShapeError("out_channels", f"{m.out_channels} contradicts weight_shape: {ws[1]} per group x {g} groups")
        if ws[0] != m.in_channels:
            return [("weight_shape", f"holds {ws[0]} input channels; the input has {m.in_channels}")]
        return []
    if ws[0] != m.out_channels:
        raise ShapeError("out_channels", f"{m.out_channels} contradicts weight_shape's {ws[0]} output channels")
    if g >= 1 and ws[1] * g != m.in_channels:
        return [("weight_shape", f"reads {ws[1]} input channels per group x {g} groups; the input has {m.in_channels}")]
    return []


def _dtype_problems(m: CaseModel) -> Problems:
    """Per-tensor dtypes (input_dtype, weight_dtype, bias_dtype): an integer or complex tensor, or tensors of
    different dtypes, make the case invalid; stating them otherwise is an input error."""
    given = [(n, getattr(m, n)) for n in ("input_dtype", "weight_dtype", "bias_dtype") if getattr(m, n) is not None]
    if not given:
        return []
    if m.dtype in QUANT_DTYPES:
        raise ShapeError(given[0][0], f"a quantized ({m.dtype}) case's tensors have fixed dtypes")
    if m.bias_dtype is not None and not m.bias:
        raise ShapeError("bias_dtype", "needs bias: true")
    tensors = [("input_dtype", m.input_dtype or m.dtype), ("weight_dtype", m.weight_dtype or m.dtype)]
    if m.bias:
        tensors.append(("bias_dtype", m.bias_dtype or m.dtype))
    differ = [(n, d) for n, d in tensors if d != tensors[0][1]]
    if differ:
        return [(differ[0][0], f"{differ[0][1]} differs from the input's {tensors[0][1]}")]
    if tensors[0][1] in INTEGER_DTYPES or tensors[0][1] in COMPLEX_DTYPES:
        return []  # a convolution torch computes, which no oracle here judges: invalid only for another reason
    raise ShapeError(given[0][0], f"every tensor is {tensors[0][1]}: say it with dtype: {tensors[0][1]}")


def _one_kind_problem(m: CaseModel, problems: Problems) -> None:
    """Integer or complex tensors of one dtype throughout make a convolution torch computes (and convdiff's oracle
    does not): such a case must be invalid for another reason."""
    d = m.input_dtype
    if not problems and (d in INTEGER_DTYPES or d in COMPLEX_DTYPES):
        raise ShapeError("input_dtype", f"{d} throughout is a convolution torch computes and convdiff has no "
                                        "oracle for; state it only in a case invalid for another reason")


def _shape_rules(m: CaseModel, transpose: bool, stride: tuple[int, ...]) -> Problems:
    """unbatched and same_convention: what they cannot go with (ShapeError) and what makes them invalid."""
    if m.unbatched:
        if m.batch != 1:
            raise ShapeError("batch", f"an unbatched input has no batch axis; got batch {m.batch} (leave it out)")
        if m.epilogue or m.dtype in QUANT_DTYPES:
            raise ShapeError("unbatched", "an unbatched case has no epilogue and no quantized dtype")
    if m.same_convention != "torch":
        return []
    if m.padding != "same":
        raise ShapeError("same_convention", f"says whose padding: same is meant; the padding is {m.padding!r}")
    if transpose:
        return [("padding", "torch's conv_transpose takes no padding='same' (same_convention: torch)")]
    if any(s > 1 for s in stride):
        return [("padding", f"torch's padding='same' needs stride 1, got {list(stride)} "
                            "(TensorFlow's, same_convention: tensorflow, takes any stride)")]
    return []


def canonical_case(m: CaseModel, case_id: str, file: str, line: int) -> tuple[Case, list[tuple[str, str]]]:
    """The canonical Case and the list of (field, problem) making it invalid.

    Raises ShapeError for malformed per-dimension lists.
    """
    rank, transpose = op_rank(m.op), op_is_transpose(m.op)
    input_size = _per_dim("input_size", m.input_size, rank, m.op)
    kernel = _per_dim("kernel_size", m.kernel_size, rank, m.op)
    stride = _per_dim("stride", m.stride, rank, m.op)
    dilation = _per_dim("dilation", m.dilation, rank, m.op)
    padding = _padding(m.padding, rank, m.op)
    out_pad = _per_dim("output_padding", m.output_padding, rank, m.op)
    if not transpose and any(out_pad):
        # No framework's forward convolution has this argument: nothing for a backend to reject.
        raise ShapeError("output_padding", f"only transposed convolutions take output_padding ({m.op} does not)")

    quant = _quant(m)
    problems = [*_value_problems(stride, dilation, padding, m.groups), *_weight_problems(m, rank, kernel),
                *_dtype_problems(m), *_shape_rules(m, transpose, stride)]
    if transpose and any(out_pad) and isinstance(padding, str):
        problems.append(("output_padding", f"cannot be combined with padding: {padding} (give explicit padding)"))
    for i, (op_, s, d) in enumerate(zip(out_pad, stride, dilation)):
        if transpose and op_ >= max(s, d):
            problems.append(("output_padding", f"must be < max(stride, dilation) = {max(s, d)} in dim {i}, got {op_}"))
            break
    for name, n in (("in_channels", m.in_channels), ("out_channels", m.out_channels)):
        if m.groups >= 1 and n % m.groups:
            problems.append(("groups", f"{m.groups} does not divide {name} = {n}"))
            break
    geometry = None
    if not _value_problems(stride, dilation, padding, m.groups):  # a stride of 0 has no output size
        geometry = resolve_geometry(transpose, input_size, kernel, stride, padding,
                                    out_pad if transpose else (), dilation)
        bad = [(i, n) for i, n in enumerate(geometry.out_size) if n < 1]
        if bad:
            i, n = bad[0]
            problems.append(("output size", f"would be {n} in dim {i} (must be >= 1)"))
    _one_kind_problem(m, problems)

    case = Case(
        id=case_id, op=m.op, in_channels=m.in_channels, out_channels=m.out_channels,
        input_size=input_size, kernel_size=kernel, batch=m.batch, stride=stride,
        padding=padding, output_padding=out_pad if transpose else (0,) * rank,
        dilation=dilation, groups=m.groups, bias=m.bias, layout=m.layout, dtype=m.dtype,
        data=m.data, seed=default_seed(case_id) if m.seed is None else m.seed,
        expect=m.expect, tier=m.tier, tags=tuple(m.tags), gradients=m.gradients, epilogue=tuple(m.epilogue), quant=quant,
        unbatched=m.unbatched, same_convention=m.same_convention,
        weight_shape_given=None if m.weight_shape is None else tuple(m.weight_shape),
        input_dtype=m.input_dtype, weight_dtype=m.weight_dtype, bias_dtype=m.bias_dtype, file=file, line=line,
        geometry=None if problems else geometry,
    )
    return case, problems
