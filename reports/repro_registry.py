"""The registry of reproducer templates: one per framework, found by backend name.

A template is `fn(rec, case) -> str`: the code that defines
`run_framework(x, w, b) -> (out as a float64 array in the case layout, dtype name)`,
which reports/repro.py puts between the script's header (inputs from the seed) and its
footer (float64 reference, bound, verdict). It raises ReproUnavailable when no script
can be written for that record.

This module imports no template module, and none of them imports reports/repro.py,
so the import graph has no cycle (tests/test_import_cycles.py checks it).

To add the templates of a new backend:
1. write reports/repro_<framework>.py; decorate each template with
   `@register("<backend name or family>")`, imported from this module only;
2. add `from reports import repro_<framework>` to reports/repro_templates.py,
   the one loader, which reports/repro.py imports before looking a name up;
3. test it like tests/test_repro_frameworks.py (the script run in a subprocess).
"""

from __future__ import annotations

from collections.abc import Callable

from harness.execution.records import Record
from harness.model.case import Case

BackendTemplate = Callable[[Record, Case], str]
BACKEND_TEMPLATES: dict[str, BackendTemplate] = {}


class ReproUnavailable(Exception):
    """No script can be written for this record (no template, invalid case, ...); the message says why."""


def stale(rec: Record) -> ReproUnavailable:
    """The refusal for a record whose calls the adapter no longer makes (it changed since the run)."""
    return ReproUnavailable(f"{rec.backend}'s translation of this case has changed since the record was made "
                            "(re-run the case: omit --results)")


def require_lines(rec: Record, lines: list[str]) -> None:
    """A recorded translation (its `# exact identity:` notes aside) must be exactly `lines`."""
    recorded = [ln for ln in rec.translation.splitlines() if not ln.startswith("# exact identity:")]
    if rec.translation.strip() and recorded != lines:
        raise stale(rec)


def register(name: str) -> Callable[[BackendTemplate], BackendTemplate]:
    """Add a backend template: `name` is a backend name, or the part before ':' / the first '-'."""
    def deco(fn: BackendTemplate) -> BackendTemplate:
        if BACKEND_TEMPLATES.get(name, fn) is not fn:
            raise ValueError(f"two reproducer templates registered for '{name}'")
        BACKEND_TEMPLATES[name] = fn
        return fn
    return deco


def template_for(rec: Record) -> BackendTemplate:
    """Exact backend name first, then its family (`fault:nan` -> fault, `tvm-onnx-import` -> tvm)."""
    name = rec.backend
    for key in (name, name.split(":")[0], name.split("-")[0]):
        if key in BACKEND_TEMPLATES:
            return BACKEND_TEMPLATES[key]
    if name.startswith("mutant:") and "F.conv" in rec.translation:  # mutants written as torch calls
        return BACKEND_TEMPLATES["torch"]
    raise ReproUnavailable(f"no reproducer template for backend '{name}' (known: {', '.join(sorted(BACKEND_TEMPLATES))})")
