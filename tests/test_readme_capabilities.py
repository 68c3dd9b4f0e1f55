"""The README's capability table is the one `convdiff backends --capabilities` prints."""

from __future__ import annotations

from pathlib import Path

from backends.registry import REAL_BACKENDS
from harness.commands.probe.capabilities import capability_table

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_capability_table_matches_the_declarations() -> None:
    table = capability_table(list(REAL_BACKENDS))
    text = README.read_text()
    assert table in text, "README's capability table is stale: paste `convdiff backends --capabilities` over it"
