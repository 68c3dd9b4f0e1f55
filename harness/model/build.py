"""Build canonical cases from keyword arguments (tests, minimizer, scripts), with the loader's checks."""

from __future__ import annotations

from typing import Any

from harness.model.case import Case
from harness.model.schema import validate_fields
from harness.model.validity import ShapeError, canonical_case


def _yamlish(v: Any) -> Any:
    """Tuples -> lists, as they would come out of a YAML file."""
    if isinstance(v, tuple):
        return [_yamlish(x) for x in v]
    return v


def make_case(file: str = "<inline>", **fields: Any) -> Case:
    """A validated Case from case fields (YAML spelling); raises ValueError if invalid."""
    fields.setdefault("id", "inline")
    model, problem = validate_fields({k: _yamlish(v) for k, v in fields.items()})
    if problem:
        raise ValueError(f"{problem[0]}: {problem[1]}")
    assert model is not None
    try:
        case, problems = canonical_case(model, model.id, file, 0)
    except ShapeError as exc:
        raise ValueError(f"{exc.field}: {exc.problem}") from None
    if problems and model.expect == "valid":
        raise ValueError("; ".join(f"{f}: {p}" for f, p in problems))
    if not problems and model.expect == "invalid":
        raise ValueError("expect: is 'invalid' but the case is a valid convolution")
    return case
