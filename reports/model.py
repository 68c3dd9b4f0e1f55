"""The report's data model: what report.html shows, computed from records and the summary.

Kept apart from rendering (html.py, payload.py and the templates) so the model can be tested without
parsing HTML, and so a 20,000-result report stays cheap: passing results only become matrix counts;
details are built for non-pass results alone.

Findings (results sharing a signature) are ordered by class (reports.overview.CLASSES): silent wrong
values first, ranked by error/bound (a non-finite output counts as the largest; a wrong shape or dtype
and an accepted invalid case, which have no error/bound, come after every measured one); then crashes
and timeouts; then refusals and errors; unsupported last. Within a class, groups holding an unexpected
result come before those a known issue explains.
"""

from __future__ import annotations

import functools
import json
import math
import shlex
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from harness.execution.records import STATUSES, Record
from harness.model.case import OPS, QUANT_DTYPES
from reports.families import family, group_targets
from reports.known import KnownView, known_views
from reports.overview import CLASS_OF, Overview, overview
from reports.properties import properties

# Matrix / badge order: most alarming first after pass, so the eye lands on it.
STATUS_ORDER = ("pass", "within_bound", "mismatch", "shape_mismatch", "accepted_invalid", "rejected", "error", "crash", "timeout",
                "unsupported")
assert set(STATUS_ORDER) == set(STATUSES)
# one-letter codes for the matrix cells (the legend above the matrix spells them out)
STATUS_CODE = {"pass": "\u2713", "within_bound": "\u2248", "mismatch": "M", "shape_mismatch": "S", "accepted_invalid": "A", "rejected": "R",
               "error": "E", "crash": "C", "timeout": "T", "unsupported": "U"}
NO_RATIO = -1.0  # severity of a wrong value without an error/bound (wrong shape or dtype, accepted invalid case)


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
    key: int = -1            # the result's place in page order: its detail panel, its #r= link
    blame: dict[str, Any] | None = None  # who agrees with the oracle on this case (summary['blame'])

    @property
    def row(self) -> str:
        return matrix_row(self.rec)

    @property
    def label(self) -> str:
        r = self.rec
        return f"{r.file}::{r.case_id}" + (f" [{r.output}]" if r.output != "out" else "")

    @property
    def search(self) -> str:
        """Lower-case text the search box matches against (the finding adds its diagnosis and known issue)."""
        r = self.rec
        return " ".join([r.file, r.case_id, r.output, r.message]).lower()


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
    family: str = ""
    known: KnownView | None = None
    index: int = -1          # place in page order
    common: str = ""         # what the group's results share that the target's passes do not (summary findings)

    @property
    def key(self) -> tuple:
        return (self.backend, self.device, self.op, self.status, self.diagnosis, self.known_issue, self.output)

    @property
    def target(self) -> str:
        return f"{self.backend}-{self.device}"

    @property
    def cls(self) -> int:
        return CLASS_OF[self.status]

    @property
    def worst(self) -> float:
        return max((m.severity for m in self.members), default=0.0)

    @property
    def worst_text(self) -> str:
        """The largest error/bound, as the header shows it ('' for statuses that have none)."""
        w = self.worst
        if self.cls != 0 or w == NO_RATIO:
            return ""
        return "non-finite output" if math.isinf(w) else f"{ratio_text(w)} x bound"

    @property
    def unexpected(self) -> int:
        return sum(m.rec.unexpected for m in self.members)

    @property
    def new_members(self) -> int:
        return sum(m.new for m in self.members)


@dataclass
class Report:
    fingerprint: dict[str, Any]
    total: int
    unexpected: int
    ops: list[str]
    targets: list[str]
    families: list[tuple[str, list[str]]]          # (family, its targets), in display order
    matrix: dict[tuple[str, str], Counter]         # (row, target or "@family") -> status counts + "unexpected"
    findings: list[Finding]
    unsupported: list[Finding]
    known: list[KnownView]
    stale_known: list[str]
    gone: list[dict[str, Any]]
    drift: list[dict[str, Any]]   # flagged error-growth curves (summary['drift'])
    drift_plots: list[tuple[str, str]]  # (family, inline SVG) for every backend's curve
    filters: dict[str, list[str]]
    passes: int
    overview: Overview
    unexpected_results: list[ResultView] = field(default_factory=list)  # in page order
    worst_wrong: ResultView | None = None   # the largest wrong value (first member of the first finding)
    fuzz: dict[str, Any] = field(default_factory=dict)  # `convdiff fuzz`: known vs new signatures (summary['fuzz'])
    properties: dict[str, Any] = field(default_factory=dict)  # the relations' property table (reports/properties.py)

    def cell(self, op: str, column: str) -> list[tuple[str, int]]:
        """Counts in one matrix cell; `column` is a target or "@" + a family."""
        counts = self.matrix.get((op, column), Counter())
        return [(s, counts[s]) for s in STATUS_ORDER if counts[s]]

    def cell_class(self, op: str, column: str) -> str:
        """Colour of a matrix cell: its most alarming content."""
        counts = self.matrix.get((op, column), Counter())
        if not counts:
            return "empty"
        if counts["unexpected"]:
            return "bad"
        if any(counts[s] for s in STATUS_ORDER[2:-1]):  # beyond pass and within_bound (a relation's)
            return "known"
        return "unsup" if not (counts["pass"] or counts["within_bound"]) else "good"


ROW_KINDS = ("", " + epilogue", " quantized")  # the overview's rows per op, in this order


def matrix_row(rec: Record) -> str:
    """The overview row of a result: its op, apart for epilogue and quantized cases (other paths,
    other bugs: a quantized-only target's cells must not read as the float conv's); a relation's record on
    the relation's own row."""
    if rec.output.startswith("relation:"):
        return rec.output
    if rec.params.get("dtype") in QUANT_DTYPES:
        return rec.op + ROW_KINDS[2]
    return rec.op + (ROW_KINDS[1] if rec.params.get("epilogue") else ROW_KINDS[0])


def ratio_text(x: float) -> str:
    """An error/bound as the page writes it, %.3g with a plain exponent: 1.7, 5.57e15 (report.js: fmt)."""
    mantissa, e, exponent = f"{x:.3g}".partition("e")
    return mantissa + (f"e{int(exponent)}" if e else "")


def nonfinite_output(rec: Record) -> bool:
    """NaN or inf where the reference is finite (records written before `nonfinite` existed say so in the message)."""
    if rec.nonfinite:
        return True
    ratio = rec.bound_ratio
    if rec.status != "mismatch":
        return False
    return "non-finite" in rec.message if ratio is None else not math.isfinite(ratio)


def severity(rec: Record) -> float:
    """Rank of a result inside its class: a wrong value's error/bound, infinite for a non-finite output and
    NO_RATIO where no value was compared (a wrong shape or dtype, an accepted invalid case); 0 otherwise."""
    if rec.status not in ("mismatch", "shape_mismatch", "accepted_invalid"):
        return 0.0
    if nonfinite_output(rec):
        return math.inf
    return NO_RATIO if rec.bound_ratio is None else float(rec.bound_ratio)


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


def build_report(
    records: Sequence[Record],
    summary: dict[str, Any],
    known_info: dict[str, dict[str, str]] | None = None,
    script_for: Callable[[Record], str | None] | None = None,
    plot_for: Callable[[Record, bool], str] | None = None,
    scripts_per_finding: int = 5,
    full_plots: int = 16,
    drift_plots: list[tuple[str, str]] | None = None,
) -> Report:
    """The view model. `known_info`: id -> {reason, link, file, fixed_in} (reports.known.entry_info);
    `script_for` / `plot_for` are injected so tests can build a model without them."""
    matrix: dict[tuple[str, str], Counter] = defaultdict(Counter)
    groups: dict[tuple, Finding] = {}
    hits: dict[str, Counter] = defaultdict(Counter)
    fixed: dict[str, list[str]] = defaultdict(list)
    files: dict[str, str] = {}
    tags: set[str] = set()
    passes = 0
    for r in records:
        target = f"{r.backend}-{r.device}"
        row = matrix_row(r)
        for column in (target, "@" + family(r.backend)):
            cell = matrix[(row, column)]
            cell[r.status] += 1
            cell["unexpected"] += r.unexpected
        if r.known_issue:
            hits[r.known_issue][r.status] += 1
            if r.known_issue_file:
                files.setdefault(r.known_issue, r.known_issue_file)
            if r.fixed_upstream:
                fixed[r.known_issue].append(f"{r.file}::{r.case_id} [{target}]")
        if r.status in ("pass", "within_bound"):  # within_bound: a relation's pass that is not the same bits
            passes += 1
            continue
        rtags = [str(t) for t in r.params.get("tags", [])]
        tags.update(rtags)
        key = (r.backend, r.device, r.op, r.status, r.diagnosis,
               r.known_issue if r.status != "unsupported" else r.message, r.output)
        f = groups.get(key)
        if f is None:
            f = groups[key] = Finding(*key, family=family(r.backend))
        f.members.append(ResultView(r, target, rtags, severity(r), case_yaml(r), repro_command(r)))
    known = known_views(hits, fixed, files, known_info or {})
    findings = sorted((f for f in groups.values() if f.status != "unsupported"),
                      key=lambda f: (f.cls, f.unexpected == 0, -f.worst, -len(f.members), str(f.key)))
    unsupported = sorted((f for f in groups.values() if f.status == "unsupported"),
                         key=lambda f: (-len(f.members), str(f.key)))
    commons = {(d["backend"], d["device"], d["op"], d["status"], d["diagnosis"], d["known_issue"], d["output"]): d["common"]
               for d in summary.get("findings", []) if d.get("common")}
    for f in findings:
        f.known = known.get(f.known_issue or "")
        f.common = commons.get(f.key, "")
    _decorate(findings, unsupported, script_for, plot_for, scripts_per_finding, full_plots)
    blames = {(b["file"], b["case_id"], b["device"], b.get("output", "out")): b for b in summary.get("blame", [])}
    for f in findings:
        for m in f.members:
            m.blame = blames.get((m.rec.file, m.rec.case_id, m.rec.device, m.rec.output))
    _apply_baseline(findings, summary.get("baseline"))
    key = 0
    for i, f in enumerate(findings + unsupported):
        f.index = i
        for m in f.members:
            m.key, key = key, key + 1
    targets = sorted({t for _, t in matrix if not t.startswith("@")})
    present = {row for row, _ in matrix}
    rows = [op + kind for op in OPS for kind in ROW_KINDS if op + kind in present]
    rows += sorted(present - set(rows))
    families = group_targets(targets)
    return Report(
        fingerprint=summary.get("fingerprint") or {},
        total=len(records),
        unexpected=sum(r.unexpected for r in records),
        ops=rows,
        targets=targets,
        families=families,
        matrix=dict(matrix),
        findings=findings,
        unsupported=unsupported,
        known=list(known.values()),
        stale_known=list(summary.get("stale_known_issues", [])),
        gone=list((summary.get("baseline") or {}).get("gone", [])),
        drift=[d for d in summary.get("drift", []) if d.get("flagged")],
        drift_plots=drift_plots or [],
        filters={
            "family": [fam for fam, _ in families],
            "backend": sorted({r.backend for r in records}),
            "device": sorted({r.device for r in records}),
            "status": [s for s in STATUS_ORDER if s != "pass" and any(s in c for c in matrix.values())],
            "op": rows,
            "tag": sorted(tags),
        },
        passes=passes,
        overview=overview(records, summary),
        unexpected_results=[m for f in findings for m in f.members if m.rec.unexpected],
        worst_wrong=findings[0].members[0] if findings and findings[0].cls == 0 else None,
        fuzz=summary.get("fuzz") or {},
        properties=properties(records),
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
