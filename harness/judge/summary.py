"""Counts, findings and the exit status of a run; summary.json and the terminal table."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.execution.records import FAILING, STATUSES, Record
from harness.judge.blame import blame
from harness.judge.common import common_factors
from harness.judge.diagnosis_rule import generalise
from harness.judge.drift import analyze as analyze_drift
from harness.judge.drift import drift_summary


def summarize(records: Iterable[Record], fingerprint: dict[str, Any] | None = None,
              stale_known: Iterable[str] = (), broken: dict[str, str] | None = None,
              named: Iterable[str] = (), skipped: dict[str, str] | None = None) -> dict[str, Any]:
    """`broken`: targets installed but unable to run (their worker did not start, setup() raised); `named`: the
    backends the user asked for by name, each of which must give a result; `skipped`: why a target did not run."""
    records = list(records)
    generalise(records)  # unnamed wrong values: their cluster's rule as diagnosis (harness/judge/diagnosis_rule.py)
    counts: dict[str, Counter] = defaultdict(Counter)
    known_counts: Counter = Counter()
    findings: dict[tuple, list[str]] = defaultdict(list)
    by_output: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    unexpected, fixed = [], []
    for r in records:
        counts[f"{r.backend}-{r.device}"][r.status] += 1
        if r.unexpected:
            unexpected.append({"case_id": r.case_id, "file": r.file, "op": r.op, "backend": r.backend,
                               "device": r.device, "output": r.output, "status": r.status, "message": r.message,
                               "bound_ratio": r.bound_ratio, "max_abs_err": r.max_abs_err, "diagnosis": r.diagnosis,
                               "error_origin": r.error_origin,
                               # an entry matched but does not list this status: an unlisted outcome of it
                               "unlisted_of": r.known_issue if r.known_issue else None})
        elif r.status in FAILING:
            known_counts[f"{r.backend}-{r.device}"] += 1
        if r.status not in ("pass", "within_bound", "unsupported"):
            findings[(r.backend, r.device, r.op, r.status, r.diagnosis, r.known_issue, r.output)].append(r.case_id)
        if r.fixed_upstream:
            fixed.append({"known_issue": r.known_issue, "file": r.file, "case_id": r.case_id, "backend": r.backend,
                          "device": r.device, "output": r.output})
        by_output[f"{r.backend}-{r.device}"][r.output][r.status] += 1
    broken = dict(broken or {})
    for target, c in counts.items():  # a target all of whose results are errors is broken too
        if c and set(c) == {"error"}:
            first = next(r.message for r in records if f"{r.backend}-{r.device}" == target)
            broken.setdefault(target, f"every result is an error: {first.splitlines()[0] if first else ''}")
    commons = common_factors(records)  # each group's common factor, from these results alone
    ran = {r.backend for r in records}
    missing = {n: next((why for t, why in (skipped or {}).items() if t.rsplit("-", 1)[0] == n), "no result")
               for n in named if n not in ran and not any(t.rsplit("-", 1)[0] == n for t in broken)}
    return {
        "total": len(records),
        "counts": {t: {s: c[s] for s in STATUSES if c[s]} for t, c in sorted(counts.items())},
        "known_counts": {t: known_counts[t] for t in sorted(counts) if known_counts[t]},
        "unexpected": len(unexpected),
        "broken_targets": broken,
        "missing_targets": missing,
        "unexpected_results": unexpected,
        "findings": [
            {"backend": b, "device": d, "op": op, "status": s, "diagnosis": diag, "known_issue": k, "output": o,
             "count": len(ids), "cases": ids,
             **({"common": commons[key].line, "common_when": commons[key].when} if key in commons else {})}
            for key, ids in sorted(findings.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
            for b, d, op, s, diag, k, o in [key]
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
    """1 when a result is unexpected, a target is installed but broken, or a backend named in --backends gave
    no result: a run that could not look must not pass."""
    return 1 if (summary["unexpected"] or summary.get("broken_targets") or summary.get("missing_targets")) else 0


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    path.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")


def format_table(summary: dict[str, Any]) -> str:
    """Backend x status counts, for the end of a run."""
    statuses = [s for s in STATUSES if any(s in c for c in summary["counts"].values())]
    if not statuses:
        return "no results"
    known = summary.get("known_counts", {})
    unexpected = Counter(f"{u['backend']}-{u['device']}" for u in summary["unexpected_results"])
    # the statuses, then a bar, then how many failures a known issue explains and how many none does
    rows = [["target", *statuses, "|", "known", "unexpected"]] + [
        [t, *(str(c.get(s, "")) for s in statuses), "|", str(known.get(t, "")), str(unexpected.get(t, ""))]
        for t, c in summary["counts"].items()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "  ".join(("|" if i == len(statuses) + 1 else "-" * w) for i, w in enumerate(widths)))
    tail = f"{summary['total']} results, {summary['unexpected']} unexpected"
    if summary["fixed_upstream"]:
        tail += f", {len(summary['fixed_upstream'])} known issue(s) now pass (fixed upstream?)"
    if summary["stale_known_issues"]:
        tail += f"; known issues matching nothing: {', '.join(summary['stale_known_issues'])}"
    return "\n".join([*lines, tail])


def _error_text(u: dict[str, Any]) -> str:
    if u.get("bound_ratio") is not None:
        diag = f", {u['diagnosis']}" if u.get("diagnosis") else ""
        return f"error/bound {u['bound_ratio']:.3g}, max |err| {u['max_abs_err']:.3g}{diag}"
    first = (u.get("message") or "").splitlines()[0] if u.get("message") else ""
    return first if u.get("status") == "error" else first[:160]  # an error's line ends with its file and line


FIXED_NAMED = 50  # known issues' results that now pass, named one by one after the table


def format_problems(summary: dict[str, Any]) -> str:
    """What a CI log must name after the table: every unexpected result (case, target, status, error/bound or
    the first error line), each known issue's result that now passes (the entry, case and target; the first
    FIXED_NAMED), every broken target and every named backend that gave no result."""
    lines: list[str] = []
    unexpected = summary["unexpected_results"]
    if unexpected:
        lines.append(f"unexpected ({len(unexpected)}):")
        commons = {(f["backend"], f["device"], f["op"], f["status"], f["diagnosis"], f["output"]): f["common"]
                   for f in summary.get("findings", []) if f.get("common") and not f.get("known_issue")}
        groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)  # a group's results together, first seen first
        for u in unexpected:
            groups[(u["backend"], u["device"], u.get("op"), u["status"], u.get("diagnosis"), u.get("output", "out"))].append(u)
        for key, u in ((k, u) for k, members in groups.items() for u in members):
            if key in commons and u is groups[key][0]:  # what the group's results have in common, above them
                b, d, op, st, diag, out = key
                lines.append(f"  {b}-{d} {op}{'' if out == 'out' else ' ' + out} {st}"
                             f"{f' ({diag})' if diag else ''}: {commons[key]}")
            what = "" if u.get("output", "out") == "out" else f" {u['output']}"
            status = u["status"] + (f" ({u['error_origin']})" if u.get("error_origin") else "")  # whose error
            unlisted = f"  (matches {u['unlisted_of']}, which does not list {u['status']})" if u.get("unlisted_of") else ""
            lines.append(f"  {Path(u['file']).name}::{u['case_id']}  {u['backend']}-{u['device']}{what}  "
                         f"{status}  {_error_text(u)}".rstrip() + unlisted)
    fixed = summary.get("fixed_upstream") or []
    if fixed:
        lines.append(f"known issue(s) that now pass, fixed upstream? ({len(fixed)}):")
        for f in fixed[:FIXED_NAMED]:
            what = "" if f.get("output", "out") == "out" else f" {f['output']}"
            target = f"{f['backend']}-{f['device']}" if f.get("device") else f["backend"]  # older summaries: no device
            lines.append(f"  {f['known_issue']}  {Path(f.get('file') or '?').name}::{f['case_id']}  {target}{what}")
        if len(fixed) > FIXED_NAMED:
            lines.append(f"  ... and {len(fixed) - FIXED_NAMED} more (summary.json fixed_upstream, junit.xml)")
    for target, reason in summary.get("broken_targets", {}).items():
        lines.append(f"BROKEN {target}: {reason.splitlines()[0] if reason else ''}")
    for name, reason in summary.get("missing_targets", {}).items():
        lines.append(f"NO RESULT {name}: named in --backends, gave no result ({reason})")
    return "\n".join(lines)
