"""The JSON Schema of a case file, generated from the pydantic model in harness/model/schema.py.

`convdiff schema` prints it; cases/case.schema.json is its committed copy (a test keeps it
current), and every case file's first line points editors at it:
`# yaml-language-server: $schema=./case.schema.json`.

The file-level models are derived from CaseModel's fields, never restated: `defaults`
takes any field but `id`, a case entry any field (a required one may come from
`defaults`) plus `sweep`, which maps a field to a non-empty list of its values. Whether
the numbers make a valid convolution stays the loader's job (harness/model/validity.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import PydanticUndefined

from harness.model.schema import CaseModel

SCHEMA_FILE = "case.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _type(name: str) -> Any:
    """A CaseModel field's type with its constraints and validators (their json_schema_input_type included)."""
    field = CaseModel.model_fields[name]
    return Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _optional(name: str, of: Any = None) -> tuple[Any, Any]:
    """Not required in this position: the model's default shown where it has one, `null` never allowed."""
    info = CaseModel.model_fields[name]
    if of is None and info.default is not PydanticUndefined:
        return _type(name), Field(default=info.default, description=info.description)
    return (of or _type(name)), Field(default=None, json_schema_extra=_no_default, description=info.description)


def file_model() -> type[BaseModel]:
    """The pydantic model of a whole case file (used for the schema only; the loader gives line numbers)."""
    closed = ConfigDict(extra="forbid")
    names = [n for n in CaseModel.model_fields if n != "id"]
    sweep = create_model("Sweep", __config__=closed, __doc__="Cartesian product: one case per combination.",
                         **{n: _optional(n, Annotated[list[_type(n)], Field(min_length=1)]) for n in names})
    defaults = create_model("Defaults", __config__=closed, __doc__="Case fields applied to every case of the file.",
                            **{n: _optional(n) for n in names})
    entry = create_model("CaseEntry", __config__=closed, __doc__="One case, or a sweep of them; missing fields come from defaults.",
                         id=(_type("id"), ...), **{n: _optional(n) for n in names},
                         sweep=_optional("id", sweep))
    return create_model("CaseFile", __config__=closed, __doc__="A convdiff case file (YAML schema v1).",
                        defaults=(defaults | None, None),
                        cases=(Annotated[list[entry], Field(min_length=1)], ...))


def case_file_schema() -> dict[str, Any]:
    schema = file_model().model_json_schema(mode="validation")
    return {"$schema": DIALECT, "title": "convdiff case file", **{k: v for k, v in schema.items() if k != "title"}}


def schema_text() -> str:
    """The schema as committed in cases/case.schema.json (stable key order, trailing newline)."""
    return json.dumps(case_file_schema(), indent=2) + "\n"


def schema_comment(case_file: str | os.PathLike, cases_root: str | os.PathLike) -> str:
    """The first line of a case file: the schema path relative to it (./ in cases/, ../ in cases/found/)."""
    rel = os.path.relpath(Path(cases_root) / SCHEMA_FILE, Path(case_file).parent)
    return f"# yaml-language-server: $schema={rel if rel.startswith('.') else './' + rel}"


def with_schema_comment(path: str | os.PathLike, text: str) -> str:
    """Case-file text to write at `path`, its first line naming the schema when a case.schema.json sits
    in its folder or above (cases/, cases/models/, cases/found/); unchanged elsewhere."""
    start = Path(path).resolve().parent
    root = next((d for d in (start, *start.parents) if (d / SCHEMA_FILE).exists()), None)
    if root is None or text.startswith("# yaml-language-server:"):
        return text
    return schema_comment(Path(path).resolve(), root) + "\n" + text
