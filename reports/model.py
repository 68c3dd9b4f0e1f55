"""The report's data model: what report.html shows, computed from records and the summary.

Kept apart from rendering (html.py + the template) so the model can be tested without
parsing HTML, and so a 20,000-result report stays cheap: passing results only become
matrix counts; details are built for non-pass results alone.
"""

from __future__ import annotations

import functools
import json
import math
import shlex
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.execution.records import STATUSES, Record
from harness.model.case import OPS, QUANT_DTYPES

# Matrix / badge order: most alarming first after pass, so the eye lands on it.
STATUS_ORDER = ("pass", "mismatch", "shape_mismatch", "accepted_invalid", "rejected", "error", "crash", "timeout",
                "unsupported")
assert set(STATUS_ORDER) == set(STATUSES)


@dataclass
class ResultView:
    """One non-pass result, with everything its detail panel shows."""

    rec: Record
    target: str
    tags: list[str]
    severity: float
    yaml: str
    repro_cmd: str
    script: str | None = None
    plot: str = ""           # inline SVG (matplotlib for the worst members, a sparkline otherwise)
    new: bool = False        # not in the baseline's member list for this finding
    key: int = -1            # index of its detail panel in the page's lazy-loaded list
    blame: dict[str, Any] | None = None  # who agrees with the oracle on this case (summary['blame'])

    @property
    def row(self) -> str:
        return matrix_row(self.rec)

    @property
    def search(self) -> str:
        """Lower-case text the search box matches against."""
        r = self.rec
        return " ".join([r.file, r.case_id, r.output, r.message, r.diagnosis or "", r.known_issue or ""]).lower()


@dataclass
class Finding:
    """Results sharing one signature: one bug shown by 40 swept cases appears once with 40 members."""

    backend: str
    device: str
    op: str
    status: str
    diagnosis: str | None
    known_issue: str | None
    output: str = "out"      # out, or the gradient these results judge
    members: list[ResultView] = field(default_factory=list)
    baseline: str = ""       # "" (no baseline) | "new" | "still present"

    @property
    def key(self) -> tuple:
        return (self.backend, self.device, self.op, self.status, self.diagnosis, self.known_issue, self.output)

    @property
    def worst(self) -> float:
        return max((m.severity for m in self.members), default=0.0)

    @property
    def unexpected(self) -> int:
        return sum(m.rec.unexpected for m in self.members)

    @property
    def new_members(self) -> int:
        return sum(m.new for m in self.members)


@dataclass
class KnownView:
    id: str
    reason: str = ""
    link: str = ""           # shown with jinja's urlize: only http(s)/www text becomes a link
    hits: Counter = field(default_factory=Counter)   # status -> results matched
    fixed: list[str] = field(default_factory=list)   # members that now pass


@dataclass
class Report:
    fingerprint: dict[str, Any]
    total: int
    unexpected: int
    ops: list[str]
    targets: list[str]
    matrix: dict[tuple[str, str], Counter]
    findings: list[Finding]
    unsupported: list[Finding]
    known: list[KnownView]
    stale_known: list[str]
    gone: list[dict[str, Any]]
    drift: list[dict[str, Any]]   # flagged error-growth curves (summary['drift'])
    drift_plots: list[tuple[str, str]]  # (family, inline SVG) for every backend's curve
    filters: dict[str, list[str]]
    passes: int
    fuzz: dict[str, Any] = field(default_factory=dict)  # `convdiff fuzz`: known vs new signatures (summary['fuzz'])

    def cell(self, op: str, target: str) -> list[tuple[str, int]]:
        counts = self.matrix.get((op, target), Counter())
        return [(s, counts[s]) for s in STATUS_ORDER if counts[s]]

    def cell_class(self, op: str, target: str) -> str:
        """Colour of a matrix cell: its most alarming content."""
        counts = self.matrix.get((op, target), Counter())
        if not counts:
            return "empty"
        if counts["unexpected"]:
            return "bad"
        if any(counts[s] for s in STATUS_ORDER[1:-1]):
            return "known"
        return "unsup" if not counts["pass"] else "good"


ROW_KINDS = ("", " + epilogue", " quantized")  # the overview's rows per op, in this order


def matrix_row(rec: Record) -> str:
    """The overview row of a result: its op, apart for epilogue and quantized cases (other paths,
    other bugs: a quantized-only target's cells must not read as the float conv's)."""
    if rec.params.get("dtype") in QUANT_DTYPES:
        return rec.op + ROW_KINDS[2]
    return rec.op + (ROW_KINDS[1] if rec.params.get("epilogue") else ROW_KINDS[0])


def severity(rec: Record) -> float:
    """Sort key for 'worst first': the bound ratio; statuses without one (NaN, crash, ...) count as infinite."""
    if rec.status in ("pass", "unsupported"):
        return rec.bound_ratio or 0.0
    if rec.bound_ratio is None or not math.isfinite(rec.bound_ratio):
        return math.inf
    return rec.bound_ratio


class _PlainDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """No &anchors / *aliases for repeated values: the YAML is for people to paste. libyaml's emitter where
    PyYAML has it: the same text for all 1263 corpus cases, in a quarter of the time (1.5 -> 0.4 s a report)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def case_yaml(rec: Record) -> str:
    """The canonical case as a YAML case entry (what to paste into a case file)."""
    return _case_yaml(json.dumps({"id": rec.case_id, **rec.params}))


@functools.lru_cache(maxsize=4096)
def _case_yaml(doc: str) -> str:
    """One dump per case, not per result (a case's results on every backend share it; JSON keeps key order)."""
    return yaml.dump([json.loads(doc)], Dumper=_PlainDumper, sort_keys=False, default_flow_style=None,
                     width=100).rstrip()


def repro_command(rec: Record) -> str:
    return shlex.join(["convdiff", "repro", f"{rec.file}::{rec.case_id}", "--backend", rec.backend,
                       "--device", rec.device, *(["--output", rec.output] if rec.output != "out" else [])])


def load_known_info(path: Path) -> dict[str, tuple[str, str]]:
    """id -> (reason, link) from known_issues.yaml; empty when it is missing or broken (report still renders)."""
    try:
        from harness.judge.known_issues import load_known_issues

        return {e.id: (e.reason, e.link) for e in load_known_issues(path).entries}
    except Exception:  # noqa: BLE001 - a broken file is reported by `run`, not here
        return {}


def build_report(
    records: Sequence[Record],
    summary: dict[str, Any],
    known_info: dict[str, tuple[str, str]] | None = None,
    script_for: Callable[[Record], str | None] | None = None,
    plot_for: Callable[[Record, bool], str] | None = None,
    scripts_per_finding: int = 5,
    full_plots: int = 16,
    drift_plots: list[tuple[str, str]] | None = None,
) -> Report:
    """The view model. `script_for` / `plot_for` are injected so tests can build a model without them."""
    matrix: dict[tuple[str, str], Counter] = defaultdict(Counter)
    groups: dict[tuple, Finding] = {}
    known: dict[str, KnownView] = {}
    tags: set[str] = set()
    passes = 0
    for r in records:
        target = f"{r.backend}-{r.device}"
        cell = matrix[(matrix_row(r), target)]
        cell[r.status] += 1
        cell["unexpected"] += r.unexpected
        if r.known_issue:
            kv = known.setdefault(r.known_issue, KnownView(r.known_issue))
            kv.hits[r.status] += 1
            if r.fixed_upstream:
                kv.fixed.append(f"{r.file}::{r.case_id} [{target}]")
        if r.status == "pass":
            passes += 1
            continue
        rtags = [str(t) for t in r.params.get("tags", [])]
        tags.update(rtags)
        key = (r.backend, r.device, r.op, r.status, r.diagnosis,
               r.known_issue if r.status != "unsupported" else r.message, r.output)
        f = groups.setdefault(key, Finding(*key))
        f.members.append(ResultView(r, target, rtags, severity(r), case_yaml(r), repro_command(r)))
    for kid, (reason, link) in (known_info or {}).items():
        if kid in known:
            known[kid].reason, known[kid].link = reason, link
    findings = sorted((f for f in groups.values() if f.status != "unsupported"),
                      key=lambda f: (f.unexpected == 0, -f.worst, -len(f.members), str(f.key)))
    unsupported = sorted((f for f in groups.values() if f.status == "unsupported"),
                         key=lambda f: (-len(f.members), str(f.key)))
    _decorate(findings, unsupported, script_for, plot_for, scripts_per_finding, full_plots)
    blames = {(b["file"], b["case_id"], b["device"], b.get("output", "out")): b for b in summary.get("blame", [])}
    for f in findings:
        for m in f.members:
            m.blame = blames.get((m.rec.file, m.rec.case_id, m.rec.device, m.rec.output))
    _apply_baseline(findings, summary.get("baseline"))
    targets = sorted({t for _, t in matrix})
    present = {row for row, _ in matrix}
    rows = [op + kind for op in OPS for kind in ROW_KINDS if op + kind in present]
    rows += sorted(present - set(rows))
    return Report(
        fingerprint=summary.get("fingerprint") or {},
        total=len(records),
        unexpected=sum(r.unexpected for r in records),
        ops=rows,
        targets=targets,
        matrix=dict(matrix),
        findings=findings,
        unsupported=unsupported,
        known=sorted(known.values(), key=lambda k: k.id),
        stale_known=list(summary.get("stale_known_issues", [])),
        gone=list((summary.get("baseline") or {}).get("gone", [])),
        drift=[d for d in summary.get("drift", []) if d.get("flagged")],
        drift_plots=drift_plots or [],
        filters={
            "backend": sorted({r.backend for r in records}),
            "device": sorted({r.device for r in records}),
            "status": [s for s in STATUS_ORDER if s != "pass" and any(s in c for c in matrix.values())],
            "op": rows,
            "tag": sorted(tags),
        },
        passes=passes,
        fuzz=summary.get("fuzz") or {},
    )


def _decorate(findings: list[Finding], unsupported: list[Finding], script_for: Callable | None,
              plot_for: Callable | None, scripts_per_finding: int, full_plots: int) -> None:
    """Sort members worst first; scripts for the worst few of each finding; full plots for the worst overall."""
    budget = full_plots
    for f in findings:
        f.members.sort(key=lambda m: (-m.severity, m.rec.file, m.rec.case_id))
        for i, m in enumerate(f.members):
            if script_for is not None and i < scripts_per_finding:
                m.script = script_for(m.rec)
            if plot_for is not None and m.rec.where:
                full = i == 0 and budget > 0
                budget -= full
                m.plot = plot_for(m.rec, full)
    for f in unsupported:
        f.members.sort(key=lambda m: (m.rec.file, m.rec.case_id))


def _apply_baseline(findings: list[Finding], baseline: dict[str, Any] | None) -> None:
    """Copy the new / still-present marks computed by reports.merge onto the findings."""
    if not baseline:
        return
    marks = {tuple(d["key"]): d for d in baseline.get("findings", [])}
    for f in findings:
        mark = marks.get(tuple(f.key))
        if mark is None:
            continue
        f.baseline = mark["state"]
        new_cases = set(mark.get("new_cases", []))
        for m in f.members:
            m.new = f.baseline == "new" or m.rec.case_id in new_cases
