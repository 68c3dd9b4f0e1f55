"""The files every run writes at its end (summary.json, report.html, junit.xml): shared by
`convdiff run` and `convdiff fuzz`, so both speak the same formats."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.execution.fingerprint import fingerprint
from harness.execution.records import Record
from harness.execution.runner import RunInfo
from harness.judge.known_issues import KnownIssues
from harness.judge.summary import summarize, write_summary


def write_run_outputs(out: Path, records: Sequence[Record], info: RunInfo, argv: list[str], known: KnownIssues,
                      stale: Iterable[str] = (), extra: dict[str, Any] | None = None,
                      named: Iterable[str] = ()) -> dict[str, Any]:
    """summary.json (with the known issues used and any `extra` sections), then the reports; returns the summary.
    `named`: the backends named in --backends (each must give a result)."""
    summary = summarize(records, fingerprint(argv, info.fingerprints, {**info.skipped, **info.broken}, info.host_facts),
                        stale, info.broken, named, info.skipped)
    from harness.commands.probe.cells import run_table_entry

    summary["fingerprint"].update(run_table_entry(info.fingerprints))  # measured capabilities, when probed
    summary["known_issues"] = {e.id: [e.reason, e.link, e.source] for e in known.entries}
    summary.update(extra or {})
    write_summary(out / "summary.json", summary)
    from reports import write_reports

    write_reports(out, records, summary)
    return summary
