"""`convdiff selftest`: prove the harness catches and names every historical bug class.

Every `mutant:<bug>` backend (torch with one DOMAIN.md bug put back) runs over the
smoke tier beside plain torch, in one run so that the workers are shared. A bug
class is covered when its mutant is caught (mismatch or shape_mismatch) at least
once and the diagnosis seen most often on its failures is its own name; the run
is only meaningful if plain torch is clean on the same cases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from backends.registry import get_backend
from backends.testing.mutants import MUTANTS
from harness.execution.records import Record
from harness.execution.runner import run_cases
from harness.judge.known_issues import layered
from harness.judge.verdict import Verdicts
from harness.model.case import Case
from harness.model.loader import case_files, load_cases

CAUGHT = ("mismatch", "shape_mismatch")
REFERENCE = "torch"


@dataclass
class MutantScore:
    bug: str
    run: int = 0
    caught: int = 0
    own: int = 0
    diagnoses: Counter = field(default_factory=Counter)

    @property
    def dominant(self) -> str | None:
        return self.diagnoses.most_common(1)[0][0] if self.diagnoses else None

    @property
    def accuracy(self) -> float:
        return self.own / self.caught if self.caught else 0.0

    @property
    def ok(self) -> bool:
        return self.caught > 0 and self.dominant == self.bug


@dataclass
class SelftestResult:
    scores: list[MutantScore]
    reference_failures: list[Record]
    skipped: dict[str, str]  # targets that did not run: each makes the selftest fail
    references: list[str] = field(default_factory=lambda: [REFERENCE])

    @property
    def ok(self) -> bool:
        return not self.reference_failures and not self.skipped and all(s.ok for s in self.scores)


def smoke_cases(paths: Sequence[str]) -> list[Case]:
    return [c for c in load_cases(paths) if c.tier == "smoke"]


def score(records: Sequence[Record], references: Sequence[str] = (REFERENCE,),
          bugs: Sequence[str] = MUTANTS) -> tuple[list[MutantScore], list[Record]]:
    """Per-mutant scores, and the reference backends' results that are not clean."""
    scores = {b: MutantScore(b) for b in bugs}
    reference_failures = [r for r in records if r.backend in references and r.unexpected]
    for r in records:
        s = scores.get(r.backend.removeprefix("mutant:")) if r.backend.startswith("mutant:") else None
        if s is None:
            continue
        s.run += 1
        if r.status in CAUGHT:
            s.caught += 1
            s.own += r.diagnosis == s.bug
            s.diagnoses[r.diagnosis or "none"] += 1
    return list(scores.values()), reference_failures


def run_selftest(paths: Sequence[str] = ("cases",), timeout: float = 60.0, jobs: int = 1,
                 references: Sequence[str] | None = None) -> SelftestResult:
    """All mutants and the reference backends (torch by default; a plugin's adapter proves itself clean the
    same way) over the smoke tier, in one run_cases call (shared warm workers)."""
    cases = smoke_cases(paths)
    files = case_files(paths)
    refs = list(references or [REFERENCE])
    known = layered([], list(dict.fromkeys(f.parent for f in files)), [get_backend(r).known_issues_path() for r in refs])
    targets = [*((r, "cpu") for r in refs), *((f"mutant:{b}", "cpu") for b in MUTANTS)]
    records: list[Record] = []
    info = run_cases(cases, targets, records.append, Verdicts(known), timeout=timeout, jobs=jobs)
    scores, reference_failures = score(records, refs)
    return SelftestResult(scores, reference_failures, {**info.skipped, **info.broken}, refs)


def format_selftest(result: SelftestResult) -> str:
    """The table: one row per mutant, then the verdict on torch and overall."""
    head = ("mutant", "cases", "caught", "diagnosed", "accuracy", "dominant diagnosis", "result")
    rows = [head] + [
        (s.bug, str(s.run), str(s.caught), str(s.own), f"{s.accuracy:.0%}", s.dominant or "-", "ok" if s.ok else "FAIL")
        for s in result.scores
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i in (0, 5, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    failures = result.reference_failures
    lines.append("")
    for ref in result.references:
        mine = [r for r in failures if r.backend == ref]
        lines.append(f"{ref}: clean" if not mine else
                     f"{ref}: NOT clean ({len(mine)} unexpected: "
                     + ", ".join(f"{r.case_id} {r.status}" for r in mine[:5]) + ")")
    for target, reason in result.skipped.items():
        lines.append(f"skipped {target}: {reason}")
    caught = sum(s.ok for s in result.scores)
    lines.append(f"selftest: {caught}/{len(result.scores)} bug classes caught and named; "
                 + ("ok" if result.ok else "FAILED"))
    return "\n".join(lines)
