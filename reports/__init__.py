"""Report writers. Each takes the records and the summary of a run and writes one file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.execution.records import Record


def write_reports(out_dir: Path, records: Sequence[Record], summary: dict[str, Any]) -> list[Path]:
    """Every report besides results.jsonl and summary.json; returns the paths written."""
    from reports.html import write_html
    from reports.junit import write_junit
    from reports.properties import properties, property_host, write_properties

    junit, html = out_dir / "junit.xml", out_dir / "report.html"
    written = [junit, html]
    table = properties(records, property_host(summary))
    if table["targets"]:  # the run judged metamorphic relations: DIR/properties.json
        write_properties(out_dir / "properties.json", table)
        written.append(out_dir / "properties.json")
    write_junit(junit, records, summary)
    write_html(html, records, summary)
    return written
