"""The capability table, derived from each adapter's own `capabilities` declaration."""

from __future__ import annotations

from dataclasses import fields

from backends.registry import get_backend


def _cell(column: str, value: object) -> str:
    if isinstance(value, tuple):
        items = [v.removeprefix("conv_") for v in value] if column == "ops" else list(value)
        return ", ".join(items) if items else "-"
    return str(value)


def capability_table(names: list[str]) -> str:
    """A Markdown table: one row per backend, one column per declared capability."""
    cols = [f.name for f in fields(get_backend(names[0]).capabilities)]
    rows = [[name, *(_cell(c, getattr(get_backend(name).capabilities, c)) for c in cols)] for name in names]
    header = ["backend", *cols]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
