"""Case files -> canonical Cases: defaults, sweeps, validation, one-line errors."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.model.case import Case
from harness.model.schema import CASE_FIELDS, validate_fields
from harness.model.validity import ShapeError, canonical_case
from harness.model.yamlmap import InputError, LineList, LineMap, load_yaml, parsed_once

NOT_CASE_FILES = {"known_issues.yaml"}
CASE_FILE_MARKER = "# convdiff: cases"  # a leading comment line that makes pytest collect the file wherever it is
TOP_KEYS = ("defaults", "cases")


def format_value(v: Any) -> str:
    """Compact, id-safe text for a swept value: 3, 3x5, 1:0x0:1, same; a mapping as
    key-value pairs joined by `+` (per_channel-true+range-full)."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, dict):
        return "+".join(f"{k}-{format_value(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "x".join(":".join(map(str, p)) if isinstance(p, list) else str(p) for p in v)
    return str(v)


def _expand(path: str, raw: LineMap, defaults: LineMap) -> Iterable[tuple[str, dict, dict]]:
    """Yield (case_id, merged mapping, line of each field) for every sweep combination."""
    merged: dict = {**defaults, **{k: v for k, v in raw.items() if k != "sweep"}}
    lines = {**{k: defaults.lines[k] for k in defaults}, **{k: raw.lines[k] for k in raw}}
    base_id = raw.get("id")
    sweep = raw.get("sweep")
    if sweep is None:
        yield base_id if isinstance(base_id, str) else "", merged, lines
        return
    where = raw.lines["sweep"]
    if not isinstance(sweep, LineMap) or not sweep:
        raise InputError(path, where, "sweep", "must be a non-empty mapping of field: [values]")
    for name, values in sweep.items():
        if name not in CASE_FIELDS or name == "id":
            raise InputError(path, sweep.lines[name], f"sweep.{name}", "not a sweepable case field")
        if not isinstance(values, LineList) or not values:
            raise InputError(path, sweep.lines[name], f"sweep.{name}", "must be a non-empty list of values")
    names = list(sweep)
    for combo in itertools.product(*(range(len(sweep[n])) for n in names)):
        case = dict(merged)
        case_lines = dict(lines)
        for name, idx in zip(names, combo):
            case[name] = sweep[name][idx]
            case_lines[name] = sweep[name].lines[idx]
        suffix = ",".join(f"{n}={format_value(sweep[n][i])}" for n, i in zip(names, combo))
        yield f"{base_id}[{suffix}]", case, case_lines


def load_file(path: str | os.PathLike) -> list[Case]:
    """All cases of one file, expanded; raise InputError on the first problem."""
    return list(parsed_once(str(path), "cases", _load_file))


def _load_file(path: str, text: str) -> tuple[Case, ...]:
    doc = load_yaml(path, text)
    if not isinstance(doc, LineMap):
        raise InputError(path, getattr(doc, "line", 1), "file", "must be a mapping with a 'cases' list")
    for key in doc:
        if key not in TOP_KEYS:
            raise InputError(path, doc.lines[key], key, "unknown top-level key (expected defaults, cases)")
    defaults = doc.get("defaults", LineMap(1))
    if defaults is None:
        defaults = LineMap(doc.lines["defaults"])
    if not isinstance(defaults, LineMap):
        raise InputError(path, doc.lines["defaults"], "defaults", "must be a mapping of case fields")
    for key in defaults:
        if key in ("id", "sweep"):
            raise InputError(path, defaults.lines[key], f"defaults.{key}", "not allowed in defaults")
        if key not in CASE_FIELDS:
            raise InputError(path, defaults.lines[key], f"defaults.{key}", "unknown field")
    if "cases" not in doc:
        raise InputError(path, doc.line, "cases", "required field is missing")
    raw_cases = doc["cases"]
    if not isinstance(raw_cases, LineList) or not raw_cases:
        raise InputError(path, doc.lines["cases"], "cases", "must be a non-empty list")

    out: list[Case] = []
    seen: dict[str, int] = {}
    for raw, raw_line in zip(raw_cases, raw_cases.lines):
        if not isinstance(raw, LineMap):
            raise InputError(path, raw_line, "cases", "each case must be a mapping")
        for case_id, mapping, lines in _expand(path, raw, defaults):
            out.append(_one_case(path, raw_line, case_id, mapping, lines, seen))
    return tuple(out)


def _one_case(path: str, raw_line: int, case_id: str, mapping: dict, lines: dict, seen: dict) -> Case:
    model, problem = validate_fields(mapping)
    if problem:
        field, text = problem
        line = lines.get(field.split("[")[0], raw_line)
        raise InputError(path, line, field, text)
    assert model is not None
    if case_id in seen:
        raise InputError(path, lines.get("id", raw_line), "id", f"duplicate id '{case_id}' (first at line {seen[case_id]})")
    seen[case_id] = lines.get("id", raw_line)
    try:
        case, problems = canonical_case(model, case_id, path, raw_line)
    except ShapeError as exc:
        raise InputError(path, lines.get(exc.field, raw_line), exc.field, exc.problem) from None
    if problems and model.expect == "valid":
        field, text = problems[0]
        line = lines.get(field, raw_line)
        raise InputError(path, line, field, text + " (mark the case 'expect: invalid' if that is the point)")
    if not problems and model.expect == "invalid":
        raise InputError(path, lines.get("expect", raw_line), "expect", "is 'invalid' but the case is a valid convolution")
    return case


def known_issues_dir(directory: str | os.PathLike) -> Path:
    """The directory whose known_issues.yaml governs case files in `directory`: the nearest
    one at or above it, so cases/models/ and cases/found/ share cases/known_issues.yaml."""
    start = Path(directory).resolve()
    for d in (start, *start.parents):
        if (d / "known_issues.yaml").exists():
            return d
    return start


def case_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Expand directories to their *.yaml case files, subdirectories included, sorted; keep explicit files."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*.yaml") if f.name not in NOT_CASE_FILES))
        else:
            files.append(p)
    return files


def load_cases(paths: Iterable[str | os.PathLike]) -> list[Case]:
    """Every case of every file, in file then file order; ids unique per file."""
    cases: list[Case] = []
    for f in case_files(paths):
        if not f.exists():
            raise InputError(str(f), 0, "file", "no such file or directory")
        cases.extend(load_file(f))
    return cases
