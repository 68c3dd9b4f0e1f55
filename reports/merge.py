"""`convdiff report`: merge result shards, rebuild every report, and diff against a baseline night.

Shards are results.jsonl files from runs split by case or by backend; each shard's
summary.json (when it sits beside it) contributes its fingerprint. A result is keyed
by (case_id, file, backend, device): a later shard's copy of the same result wins.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.execution.host import run_host_key
from harness.execution.records import Record, read_records
from harness.judge.summary import exit_status, format_problems, format_table, summarize, write_summary

FINDING_KEY = ("backend", "device", "op", "status", "diagnosis", "known_issue", "output")


def record_key(r: Record) -> tuple[str, str, str, str, str]:
    return (r.case_id, r.file, r.backend, r.device, r.output)


def merge_records(paths: Sequence[Path]) -> tuple[list[Record], int]:
    """All records of all shards, first-seen order, one per key (the last copy wins); and how many were dropped."""
    merged: dict[tuple, Record] = {}
    dropped = 0
    for rec in read_records(list(paths)):
        key = record_key(rec)
        dropped += key in merged
        merged[key] = rec
    return list(merged.values()), dropped


def shard_summaries(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The summary.json beside each shard, where there is one."""
    out = []
    for p in paths:
        s = p.parent / "summary.json"
        if s.exists():
            try:
                out.append(json.loads(s.read_text(encoding="utf-8")))
            except json.JSONDecodeError:
                print(f"convdiff: warning: {s} is not valid JSON; its fingerprint is ignored", file=sys.stderr)
    return out


def merged_fingerprint(summaries: Sequence[dict[str, Any]], argv: Sequence[str]) -> dict[str, Any]:
    """The first shard's fingerprint, with every shard's targets, and the shards' own commands listed."""
    command = shlex.join(["convdiff", *argv])
    fps = [s.get("fingerprint") or {} for s in summaries]
    if not fps:
        from harness.execution.fingerprint import fingerprint

        return fingerprint(list(argv), {}, {})
    fp = dict(fps[0])
    targets: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for f in fps:
        targets.update(f.get("targets") or {})
        skipped.update(f.get("skipped") or {})
    fp["targets"], fp["skipped"] = targets, {t: why for t, why in skipped.items() if t not in targets}
    keys: dict[str, set[str]] = defaultdict(set)
    for f in fps:
        for t, ks in (f.get("target_host_keys") or {}).items():
            keys[t].update(ks)
    fp["target_host_keys"] = {t: sorted(ks) for t, ks in sorted(keys.items())}
    fp["host_key"] = run_host_key(fp["target_host_keys"])
    if len(fps) > 1:
        fp["shards"] = [f"{f.get('date', '?')} {f.get('machine', '?')}: {f.get('command', '?')}" for f in fps]
    fp["report_command"] = command
    return fp


def merged_stale(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """A known issue is stale only if no shard matched it (shards see different cases)."""
    if not summaries:
        return []
    sets = [set(s.get("stale_known_issues", [])) for s in summaries]
    return sorted(set.intersection(*sets))


def unlike_hosts(current: dict[str, Any], baseline: dict[str, Any]) -> set[str]:
    """Targets (`torch-cpu`) whose host facts differ between the two runs: their results are not compared.

    A target only one of the runs has host facts for (e.g. a baseline older than host facts) is not compared.
    """
    now = current.get("target_host_keys") or {}
    then = (baseline.get("fingerprint") or {}).get("target_host_keys") or {}
    return {t for t in set(now) | set(then) if now.get(t) != then.get(t)}


def diff_baseline(records: Sequence[Record], baseline: dict[str, Any], path: str = "",
                  fingerprint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Mark each finding new / still present (listing cases it did not have) and list findings gone.

    `new_unexpected` counts findings that are new, or still present with new cases, and hold
    an unexpected result among those new members: the only thing that fails a night. Like is
    compared with like: a target whose host facts changed since the baseline is marked "host
    changed" (its unexpected results count as they would without a baseline) and is never "gone".
    """
    unlike = unlike_hosts(fingerprint or {}, baseline)
    old = {tuple(f.get(k, "out" if k == "output" else None) for k in FINDING_KEY): set(f.get("cases", []))
           for f in baseline.get("findings", [])
           if f"{f.get('backend')}-{f.get('device')}" not in unlike}
    members: dict[tuple, list[Record]] = defaultdict(list)
    for r in records:
        if r.status not in ("pass", "unsupported"):
            members[tuple(getattr(r, k) for k in FINDING_KEY)].append(r)
    marks, new_unexpected = [], 0
    for key, recs in sorted(members.items(), key=lambda kv: str(kv[0])):
        if f"{recs[0].backend}-{recs[0].device}" in unlike:
            bad = any(r.unexpected for r in recs)
            new_unexpected += bad
            marks.append({"key": list(key), "state": "host changed", "new_cases": [],
                          "unexpected": bad, "new_unexpected": bad})
            continue
        before = old.get(key)
        fresh = recs if before is None else [r for r in recs if r.case_id not in before]
        bad = any(r.unexpected for r in fresh)
        new_unexpected += bad
        marks.append({"key": list(key), "state": "new" if before is None else "still present",
                      "new_cases": sorted({r.case_id for r in fresh}) if before is not None else [],
                      "unexpected": any(r.unexpected for r in recs), "new_unexpected": bad})
    gone = [dict(zip(FINDING_KEY, key), count=len(cases)) for key, cases in old.items() if key not in members]
    return {"path": path, "findings": marks, "gone": gone, "new_unexpected": new_unexpected,
            "host_changed": sorted(unlike),
            "new": sum(m["state"] == "new" for m in marks),
            "still_present": sum(m["state"] == "still present" for m in marks)}


def load_baseline(path: Path) -> dict[str, Any]:
    """OLD/summary.json, or the directory holding it."""
    if path.is_dir():
        path = path / "summary.json"
    return json.loads(path.read_text(encoding="utf-8"))


def build_report(results: Sequence[Path], out: Path, argv: Sequence[str], baseline: Path | None = None) -> int:
    """Merge shards into out/ (results.jsonl, summary.json, report.html, junit.xml); the exit status."""
    records, dropped = merge_records(results)
    if dropped:
        print(f"convdiff: {dropped} duplicate result(s) across shards; the last copy of each was kept", file=sys.stderr)
    summaries = shard_summaries(results)
    broken = {k: v for s in summaries for k, v in s.get("broken_targets", {}).items()}
    missing = {k: v for s in summaries for k, v in s.get("missing_targets", {}).items()}
    summary = summarize(records, merged_fingerprint(summaries, argv), merged_stale(summaries), broken, missing,
                        {f"{n}-?": why for n, why in missing.items()})
    known = {k: v for s in summaries for k, v in s.get("known_issues", {}).items()}
    if known:
        summary["known_issues"] = known
    if baseline is not None:
        summary["baseline"] = diff_baseline(records, load_baseline(baseline), str(baseline), summary["fingerprint"])
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.jsonl", "w", encoding="utf-8") as fh:  # after reading: out/ may hold a shard
        fh.writelines(r.to_json() + "\n" for r in records)
    write_summary(out / "summary.json", summary)
    from reports import write_reports

    write_reports(out, records, summary)
    print(format_table(summary))
    problems = format_problems(summary)
    if problems:
        print(problems)
    broken = bool(summary.get("broken_targets") or summary.get("missing_targets"))
    if baseline is not None:
        b = summary["baseline"]
        print(f"since {baseline}: {b['new']} new finding(s), {b['still_present']} still present, "
              f"{len(b['gone'])} gone; {b['new_unexpected']} new unexpected")
        if b["host_changed"]:
            print(f"not compared (host facts differ from the baseline's): {', '.join(b['host_changed'])}")
        return 1 if b["new_unexpected"] or broken else 0  # a shard that could not look never passes
    return exit_status(summary)
