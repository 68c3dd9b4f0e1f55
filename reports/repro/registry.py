"""The registry of reproducer templates: one per framework, found by backend name.

A template is `fn(rec, case) -> str`: the code that defines
`run_framework(x, w, b) -> (out as a float64 array in the case layout, dtype name)`,
which reports/repro/script.py puts between the script's header (inputs from the seed) and its
footer (float64 reference, bound, verdict). It raises ReproUnavailable when no script
can be written for that record.

This module imports no template module, and none of them imports reports/repro/script.py,
so the import graph has no cycle (tests/test_import_cycles.py checks it).

To add the templates of a new backend (a plugin outside convdiff: reports/repro/plugin.py):
1. write reports/repro/<framework>.py; decorate each template with
   `@register("<backend name or family>")`, imported from this module only;
2. add `import reports.repro.<framework>` to reports/repro/templates.py,
   the one loader, which reports/repro/script.py imports before looking a name up;
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
    """Add a backend template under an exact backend name (`fault`: every `fault:<mode>` test double)."""
    def deco(fn: BackendTemplate) -> BackendTemplate:
        if BACKEND_TEMPLATES.get(name, fn) is not fn:
            raise ValueError(f"two reproducer templates registered for '{name}'")
        BACKEND_TEMPLATES[name] = fn
        return fn
    return deco


def template_for(rec: Record, fallback: Callable[[str], BackendTemplate | None] | None = None) -> BackendTemplate:
    """The template registered under the exact backend name; for a test double, its kind (`fault:nan` ->
    fault; mutants written as torch calls -> torch); else `fallback(name)` (a plugin's, reports/repro/plugin.py).
    Never a template picked by a name's prefix: `onnxruntime-noopt` is not `onnxruntime`."""
    name = rec.backend
    if name in BACKEND_TEMPLATES:
        return BACKEND_TEMPLATES[name]
    kind = name.split(":")[0]
    if kind == "fault" and kind in BACKEND_TEMPLATES:
        return BACKEND_TEMPLATES[kind]
    if kind == "mutant" and "F.conv" in rec.translation:  # mutants written as torch calls
        return BACKEND_TEMPLATES["torch"]
    found = fallback(name) if fallback is not None and ":" not in name else None
    if found is not None:
        return found
    raise ReproUnavailable(f"no reproducer template for backend '{name}' (templates are keyed by exact name: "
                           f"{', '.join(sorted(BACKEND_TEMPLATES))}; a plugin registers its own under the entry "
                           "point group convdiff.repro)")
