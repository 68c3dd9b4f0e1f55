"""Field-level validation of one case mapping (YAML schema v1), with pydantic.

Types and ranges only; whether the numbers make a valid convolution is
`validity.py`'s job. Messages are rewritten into short user-facing sentences.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from harness.model.case import (
    DATA_KINDS,
    DTYPES,
    EPILOGUE_OPS,
    LAYOUTS,
    OPS,
    PADDING_MODES,
    QUANT_RANGES,
    SAME_CONVENTIONS,
    TENSOR_DTYPES,
    TIERS,
)

CASE_FIELDS = (
    "id", "op", "batch", "in_channels", "out_channels", "input_size", "kernel_size",
    "stride", "padding", "output_padding", "dilation", "groups", "bias", "layout",
    "dtype", "data", "seed", "expect", "tier", "tags", "gradients", "epilogue", "quant",
    "unbatched", "same_convention", "weight_shape", "input_dtype", "weight_dtype", "bias_dtype",
)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_or_list(minimum: int | None):
    """An int, or a non-empty list of ints, each >= minimum (any int for None: stride and dilation, whose values
    below 1 make an `expect: invalid` case, validity.py); lists become tuples."""

    def check(v: Any) -> int | tuple[int, ...]:
        items = v if isinstance(v, list) else [v]
        if isinstance(v, list) and not v:
            raise ValueError("must not be an empty list")
        for item in items:
            if not _is_int(item):
                raise ValueError(f"must be an integer or a list of integers, got {item!r}")
            if minimum is not None and item < minimum:
                raise ValueError(f"must be >= {minimum}, got {item}")
        return tuple(v) if isinstance(v, list) else v

    item = int if minimum is None else Annotated[int, Field(ge=minimum)]
    return BeforeValidator(check, json_schema_input_type=item | Annotated[list[item], Field(min_length=1)])


def _padding(v: Any) -> int | str | tuple:
    """int | list of ints | list of [before, after] pairs | 'same' | 'valid'. A negative amount makes an
    `expect: invalid` case (validity.py), as in torch's error inputs."""
    if isinstance(v, str):
        if v.lower() not in PADDING_MODES:
            raise ValueError(f"must be an integer, a list, a list of [before, after] pairs, 'same' or 'valid', got {v!r}")
        return v.lower()
    if _is_int(v):
        return v
    if not isinstance(v, list) or not v:
        raise ValueError(f"must be an integer, a list, a list of [before, after] pairs, 'same' or 'valid', got {v!r}")
    if all(isinstance(p, list) for p in v):
        for p in v:
            if len(p) != 2 or not all(_is_int(x) for x in p):
                raise ValueError(f"each [before, after] pair must be two integers, got {p!r}")
        return tuple(tuple(p) for p in v)
    for p in v:
        if not _is_int(p):
            raise ValueError(f"must be a list of integers or a list of [before, after] pairs, got {p!r}")
    return tuple(v)


Pos = Annotated[int, Field(ge=1)]
# What `padding` accepts, for the JSON Schema only (editors); _padding is what checks it.
PaddingInput = int | Annotated[list[int], Field(min_length=1)] | \
    Annotated[list[Annotated[list[int], Field(min_length=2, max_length=2)]], Field(min_length=1)] | Literal["same", "valid"]
INVALID_ONLY = "; below that only in an `expect: invalid` case"


Scale = Annotated[float, Field(gt=0)]


class QuantModel(BaseModel):
    """`quant:` of a quantized case (dtype uint8 | int8). Ranges against the dtype: validity.py."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    per_channel: bool = False
    range: Literal[QUANT_RANGES] = "full"  # type: ignore[valid-type]
    x_scale: Scale | None = None
    x_zero_point: int | None = None
    w_scale: Scale | Annotated[list[Scale], Field(min_length=1)] | None = None
    w_zero_point: int | None = None
    y_scale: Scale | None = None
    y_zero_point: int | None = None


class CaseModel(BaseModel):
    """One case after defaults and sweep are applied."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]
    op: Literal[OPS]  # type: ignore[valid-type]
    batch: Pos = 1
    in_channels: Pos
    out_channels: Pos
    input_size: Annotated[Any, _int_or_list(1)]
    kernel_size: Annotated[Any, _int_or_list(1)]
    stride: Annotated[Any, _int_or_list(None), Field(description=">= 1" + INVALID_ONLY)] = 1
    padding: Annotated[Any, BeforeValidator(_padding, json_schema_input_type=PaddingInput),
                       Field(description="amounts >= 0" + INVALID_ONLY)] = 0
    output_padding: Annotated[Any, _int_or_list(0)] = 0
    dilation: Annotated[Any, _int_or_list(None), Field(description=">= 1" + INVALID_ONLY)] = 1
    groups: Annotated[int, Field(description=">= 1" + INVALID_ONLY)] = 1
    bias: bool = False
    layout: Literal[LAYOUTS] = "channels_first"  # type: ignore[valid-type]
    dtype: Literal[DTYPES] = "float32"  # type: ignore[valid-type]
    data: Literal[DATA_KINDS] = "normal"  # type: ignore[valid-type]
    seed: Annotated[int, Field(ge=0, lt=2**63)] | None = None
    expect: Literal["valid", "invalid"] = "valid"
    tier: Literal[TIERS] = "full"  # type: ignore[valid-type]
    tags: list[Annotated[str, Field(pattern=r"^\S+$")]] = []
    gradients: bool = False
    epilogue: list[Literal[EPILOGUE_OPS]] = []  # type: ignore[valid-type]
    quant: QuantModel | None = None
    unbatched: Annotated[bool, Field(description="x and the output have no batch axis (torch's unbatched input); "
                                                 "batch stays 1")] = False
    same_convention: Annotated[Literal[SAME_CONVENTIONS], Field(  # type: ignore[valid-type]
        description="whose `padding: same`: tensorflow (any stride) or torch (padding='same': stride 1, "
                    "forward convolutions only; otherwise an `expect: invalid` case)")] = "tensorflow"
    weight_shape: Annotated[Annotated[list[Pos], Field(min_length=1)] | None, Field(
        description="the weight as given, where it is not the one the other fields imply "
                                  "(another rank, other channel counts): an `expect: invalid` case")] = None
    input_dtype: Annotated[Literal[TENSOR_DTYPES] | None, Field(  # type: ignore[valid-type]
        description="x's dtype where it is not `dtype` (integer, complex, or another float): an "
                    "`expect: invalid` case")] = None
    weight_dtype: Annotated[Literal[TENSOR_DTYPES] | None, Field(  # type: ignore[valid-type]
        description="w's dtype where it is not `dtype`: an `expect: invalid` case")] = None
    bias_dtype: Annotated[Literal[TENSOR_DTYPES] | None, Field(  # type: ignore[valid-type]
        description="b's dtype where it is not `dtype`: an `expect: invalid` case")] = None


_MESSAGES = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field",
    "int_type": "must be an integer",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
}


def _message(err: dict) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _MESSAGES:
        return _MESSAGES[kind]
    if kind == "literal_error":
        return f"must be one of: {ctx.get('expected', '').replace(' or ', ', ')}; got {err['input']!r}"
    if kind == "greater_than":
        return f"must be > {ctx['gt']}, got {err['input']!r}"
    if kind == "too_short":
        return f"must have at least {ctx.get('min_length', 1)} item(s)"
    if kind == "float_type":
        return "must be a number"
    if kind == "model_type":
        return "must be a mapping"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}, got {err['input']!r}"
    if kind == "less_than":
        return f"must be < {ctx['lt']}, got {err['input']!r}"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx['pattern'].strip('^$')}, got {err['input']!r}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    return err["msg"]


def validate_fields(mapping: dict) -> tuple[CaseModel | None, tuple[str, str] | None]:
    """(model, None) or (None, (field, problem)) for the first problem found."""
    try:
        return CaseModel.model_validate(dict(mapping)), None
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = [str(p) for p in err["loc"]]
        field = loc[0] + "".join(f"[{p}]" for p in loc[1:]) if loc else "case"
        return None, (field, _message(err))


def is_schema_default(name: str, value: Any) -> bool:
    """Whether a field's (normalized) value says what the schema default says, so a written case may leave it out.

    Per-axis fields (stride, dilation, output_padding) are tuples once a case is built; they are the
    default when every axis is. Explicit padding is the default when every [before, after] pair is 0.
    """
    info = CaseModel.model_fields.get(name)
    if info is None or info.is_required():
        return False
    default = info.default
    if name == "padding":
        return not isinstance(value, str) and not any(v for pair in value for v in pair)
    if name in ("stride", "dilation", "output_padding"):
        return all(v == default for v in value)
    if isinstance(value, tuple) and isinstance(default, list):  # tags, epilogue: tuples once built
        return list(value) == default
    return bool(value == default)
