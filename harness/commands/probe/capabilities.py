"""The capability table, derived from each adapter's own `capabilities` declaration."""

from __future__ import annotations

from dataclasses import fields

from backends.base import Backend
from backends.registry import get_backend
from harness.model.case import EPILOGUE_OPS


def _cell(column: str, value: object) -> str:
    if isinstance(value, tuple):
        items = [v.removeprefix("conv_") for v in value] if column == "ops" else list(value)
        return ", ".join(items) if items else "-"
    return str(value)


def epilogue_cell(backend: Backend) -> str:
    """The epilogue ops the adapter applies (its `epilogue_ops`): all, none, or all but some."""
    ops = backend.epilogue_ops
    if not ops:
        return "none"
    missing = [op for op in EPILOGUE_OPS if op not in ops]
    return "all" if not missing else "all but " + ", ".join(missing)


def capability_table(names: list[str]) -> str:
    """A Markdown table: one row per backend, one column per declared capability, then the epilogue."""
    cols = [f.name for f in fields(get_backend(names[0]).capabilities)]
    rows = [[name, *(_cell(c, getattr(get_backend(name).capabilities, c)) for c in cols),
             epilogue_cell(get_backend(name))] for name in names]
    header = ["backend", *cols, "epilogue"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
