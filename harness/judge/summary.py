"""Counts, findings and the exit status of a run; summary.json and the terminal table."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.execution.records import STATUSES, Record
from harness.judge.blame import blame
from harness.judge.drift import analyze as analyze_drift
from harness.judge.drift import drift_summary


def summarize(records: Iterable[Record], fingerprint: dict[str, Any] | None = None,
              stale_known: Iterable[str] = ()) -> dict[str, Any]:
    records = list(records)
    counts: dict[str, Counter] = defaultdict(Counter)
    findings: dict[tuple, list[str]] = defaultdict(list)
    by_output: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    unexpected, fixed = [], []
    for r in records:
        counts[f"{r.backend}-{r.device}"][r.status] += 1
        if r.unexpected:
            unexpected.append({"case_id": r.case_id, "file": r.file, "backend": r.backend,
                               "device": r.device, "output": r.output, "status": r.status, "message": r.message})
        if r.status not in ("pass", "unsupported"):
            findings[(r.backend, r.device, r.op, r.status, r.diagnosis, r.known_issue, r.output)].append(r.case_id)
        if r.fixed_upstream:
            fixed.append({"known_issue": r.known_issue, "case_id": r.case_id, "backend": r.backend, "output": r.output})
        by_output[f"{r.backend}-{r.device}"][r.output][r.status] += 1
    return {
        "total": len(records),
        "counts": {t: {s: c[s] for s in STATUSES if c[s]} for t, c in sorted(counts.items())},
        "unexpected": len(unexpected),
        "unexpected_results": unexpected,
        "findings": [
            {"backend": b, "device": d, "op": op, "status": s, "diagnosis": diag, "known_issue": k, "output": o,
             "count": len(ids), "cases": ids}
            for (b, d, op, s, diag, k, o), ids in sorted(findings.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
        ],
        # per target, per output (out, grad_input, grad_weight, grad_bias): status counts
        "counts_by_output": {t: {o: {s: c[s] for s in STATUSES if c[s]} for o, c in sorted(outs.items())}
                             for t, outs in sorted(by_output.items())},
        "fixed_upstream": fixed,
        "drift": drift_summary(analyze_drift(records)),
        "blame": blame(records),
        "stale_known_issues": sorted(stale_known),
        "fingerprint": fingerprint or {},
    }


def exit_status(summary: dict[str, Any]) -> int:
    return 1 if summary["unexpected"] else 0


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    path.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")


def format_table(summary: dict[str, Any]) -> str:
    """Backend x status counts, for the end of a run."""
    statuses = [s for s in STATUSES if any(s in c for c in summary["counts"].values())]
    if not statuses:
        return "no results"
    rows = [["target", *statuses]] + [[t, *(str(c.get(s, "")) for s in statuses)] for t, c in summary["counts"].items()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    tail = f"{summary['total']} results, {summary['unexpected']} unexpected"
    if summary["fixed_upstream"]:
        tail += f", {len(summary['fixed_upstream'])} known issue(s) now pass (fixed upstream?)"
    if summary["stale_known_issues"]:
        tail += f"; known issues matching nothing: {', '.join(summary['stale_known_issues'])}"
    return "\n".join([*lines, tail])
