"""What `convdiff fuzz` found: results grouped by signature, known vs new, first-seen times.

A signature is (backend, op, output, status, diagnosis, precision, padding kind): the
things that decide which bug a failure is, without the sizes a minimizer takes away.
A failing result explained by a known issue counts toward that issue; the failures
no known issue explains are new signatures, each with its first failing result (the
one to minimize and write down). Two kinds of unexplained failure are not new bugs and
get no signature of their own: a result whose known entry matches by its selector but
does not list its status (an unlisted outcome of that entry: the stub proposes the
status), and a timeout, which is one signature per target whatever the op (a hang is the
target's, and by then the runner has retried the case once on a fresh worker).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.execution.records import Record

Signature = tuple[str, ...]


def features(rec: Record) -> tuple[str, ...]:
    """The case features that split bug classes where the status and diagnosis do not already:
    precision for an unexplained mismatch (accumulation), padding kind for shapes and rejections,
    the invalid class (the generator's tag) for an accepted invalid case."""
    p = rec.params
    pad = p.get("padding")
    padding = f"padding={pad if isinstance(pad, str) else 'explicit'}"
    if rec.status == "accepted_invalid":
        return (next((t for t in reversed(p.get("tags", [])) if t != "fuzz"), "invalid"),)
    if rec.diagnosis:
        return ()
    if rec.status == "mismatch":
        return ("half" if p.get("dtype") in ("float16", "bfloat16") else "full", padding)
    return (padding,)


def signature(rec: Record) -> Signature:
    if rec.status == "timeout":
        return (rec.backend, "*", "*", "timeout", "-")
    return (rec.backend, rec.op, rec.output, rec.status, rec.diagnosis or "-", *features(rec))


def signature_text(sig: Sequence[str]) -> str:
    backend, op, output, status, diagnosis, *rest = sig
    what = "any op" if op == "*" else op if output == "out" else f"{op} {output}"
    diag = "" if diagnosis == "-" else f" ({diagnosis})"
    return f"{backend}: {what} {status}{diag}" + (f" [{', '.join(rest)}]" if rest else "")


@dataclass
class NewSignature:
    signature: Signature
    first: Record
    first_s: float  # seconds into the run
    count: int = 1


@dataclass
class Unlisted:
    """Results a known entry matches by its selector, with a status the entry does not list."""

    id: str
    status: str
    listed: list[str]
    first: Record
    first_s: float
    count: int = 1


@dataclass
class KnownHit:
    id: str
    first_case: str
    first_backend: str
    first_s: float
    count: int = 1
    statuses: set[str] = field(default_factory=set)


class Findings:
    """Fed one record at a time while the run goes (so first-seen times are real)."""

    def __init__(self) -> None:
        self.new: dict[Signature, NewSignature] = {}
        self.known: dict[str, KnownHit] = {}
        self.known_signatures: set[Signature] = set()
        self.unlisted: dict[tuple[str, str], Unlisted] = {}

    def add(self, rec: Record, elapsed: float) -> None:
        if rec.known_issue and rec.status in rec.known_status:
            if rec.status == "pass":
                return  # an entry that allows pass: a pass is no rediscovery of its failure
            hit = self.known.get(rec.known_issue)
            if hit is None:
                hit = self.known[rec.known_issue] = KnownHit(rec.known_issue, rec.case_id, rec.backend, elapsed, 0)
            hit.count += 1
            hit.statuses.add(rec.status)
            if rec.status != "pass":
                self.known_signatures.add(signature(rec))
            return
        if not rec.unexpected:
            return
        if rec.known_issue:  # matched, but with a status its entry does not list
            key = (rec.known_issue, rec.status)
            if key in self.unlisted:
                self.unlisted[key].count += 1
            else:
                self.unlisted[key] = Unlisted(rec.known_issue, rec.status, list(rec.known_status), rec, elapsed)
            return
        sig = signature(rec)
        if sig in self.new:
            self.new[sig].count += 1
        else:
            self.new[sig] = NewSignature(sig, rec, elapsed)

    def summary(self, known_ids: Sequence[str], minimized: dict[Signature, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The `fuzz` section of summary.json."""
        minimized = minimized or {}
        found = [i for i in known_ids if i in self.known]
        return {
            "known_rediscovered": len(found),
            "known_total": len(known_ids),
            "known_fraction": round(len(found) / len(known_ids), 3) if known_ids else None,
            "known": [{"id": h.id, "first_s": round(h.first_s, 1), "count": h.count, "first_case": h.first_case,
                       "first_backend": h.first_backend, "statuses": sorted(h.statuses)}
                      for h in sorted(self.known.values(), key=lambda h: h.first_s)],
            "known_missed": [i for i in known_ids if i not in self.known],
            "known_signatures": len(self.known_signatures),
            "unlisted_outcomes": [
                {"id": u.id, "status": u.status, "listed": u.listed, "count": u.count, "first_s": round(u.first_s, 1),
                 "first_case": u.first.case_id, "backend": u.first.backend, "output": u.first.output}
                for u in sorted(self.unlisted.values(), key=lambda u: u.first_s)],
            "new_signatures": [
                {"signature": signature_text(n.signature), "backend": n.first.backend, "op": n.first.op,
                 "output": n.first.output, "status": n.first.status, "diagnosis": n.first.diagnosis,
                 "count": n.count, "first_s": round(n.first_s, 1), "first_case": n.first.case_id,
                 "message": n.first.message, **minimized.get(n.signature, {})}
                for n in sorted(self.new.values(), key=lambda n: n.first_s)
            ],
        }


def format_findings(section: dict[str, Any]) -> str:
    """The end-of-run text: known issues rediscovered, then the new signatures."""
    lines = [f"known issues rediscovered: {section['known_rediscovered']}/{section['known_total']}"
             + (f" ({section['known_fraction']:.0%})" if section["known_fraction"] is not None else "")]
    lines += [f"  known  {h['id']:<48} first at {h['first_s']:>6.1f} s  ({h['count']} results)" for h in section["known"]]
    for u in section.get("unlisted_outcomes", []):
        lines.append(f"  UNLISTED {u['id']}: {u['status']} on {u['backend']} ({u['count']} results, first "
                     f"{u['first_case']}); the entry lists {', '.join(u['listed'])}")
    lines.append(f"new signatures: {len(section['new_signatures'])}")
    for n in section["new_signatures"]:
        written = f" -> {n['written']}" if n.get("written") else ""
        lines.append(f"  NEW    {n['signature']}  first at {n['first_s']:.1f} s, {n['count']} results{written}")
    return "\n".join(lines)


def check_summaries(paths: Sequence[str]) -> int:
    """Nightly: exit 1 when any fuzz summary.json lists a new signature."""
    new = 0
    for p in paths:
        section = json.loads(Path(p).read_text(encoding="utf-8")).get("fuzz") or {}
        for n in section.get("new_signatures", []):
            print(f"{p}: new finding: {n['signature']} ({n.get('first_case', '')})")
            new += 1
    print(f"{new} new fuzz signature(s) in {len(paths)} summary file(s)")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(check_summaries(sys.argv[1:]))
