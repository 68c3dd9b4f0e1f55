"""Does a schema-valid case describe a real convolution? Canonicalise it, list what is wrong."""

from __future__ import annotations

import zlib

from harness.model.case import QUANT_DTYPES, Case, Quant, op_is_transpose, op_rank, resolve_geometry
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
    problems: list[tuple[str, str]] = []
    if transpose and any(out_pad) and isinstance(padding, str):
        problems.append(("output_padding", f"cannot be combined with padding: {padding} (give explicit padding)"))
    for i, (op_, s, d) in enumerate(zip(out_pad, stride, dilation)):
        if transpose and op_ >= max(s, d):
            problems.append(("output_padding", f"must be < max(stride, dilation) = {max(s, d)} in dim {i}, got {op_}"))
            break
    for name, n in (("in_channels", m.in_channels), ("out_channels", m.out_channels)):
        if n % m.groups:
            problems.append(("groups", f"{m.groups} does not divide {name} = {n}"))
            break
    geometry = resolve_geometry(transpose, input_size, kernel, stride, padding,
                                out_pad if transpose else (), dilation)
    bad = [(i, n) for i, n in enumerate(geometry.out_size) if n < 1]
    if bad:
        i, n = bad[0]
        problems.append(("output size", f"would be {n} in dim {i} (must be >= 1)"))

    case = Case(
        id=case_id, op=m.op, in_channels=m.in_channels, out_channels=m.out_channels,
        input_size=input_size, kernel_size=kernel, batch=m.batch, stride=stride,
        padding=padding, output_padding=out_pad if transpose else (0,) * rank,
        dilation=dilation, groups=m.groups, bias=m.bias, layout=m.layout, dtype=m.dtype,
        data=m.data, seed=default_seed(case_id) if m.seed is None else m.seed,
        expect=m.expect, tier=m.tier, tags=tuple(m.tags), gradients=m.gradients, epilogue=tuple(m.epilogue), quant=quant, file=file, line=line,
        geometry=None if problems else geometry,
    )
    return case, problems
