"""`convdiff upstream --check`: every snippet and full check against its entry's exit contract, on this host.

A snippet runs as a maintainer runs it (an empty directory, a clean environment) and is held to its root's
primary entry under the settings it makes; a full check (`checks/<id>.py`, or a script of the older shape)
runs beside its file and is held to its own entry. A script that exits 0 where its entry applies is marked
"fixed upstream?". Exit status: 0 when every contract holds, 1 otherwise.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.commands.upstream.contract import Contract, LiveFacts, contract
from harness.commands.upstream.scripts import missing_imports, run_check, run_snippet, settings_of, version
from harness.commands.upstream.subjects import Root
from harness.execution.host import cpu_facts, env_settings
from harness.judge.known_issues import KnownIssue
from reports.upstream.docstring import parse_snippet
from reports.upstream.model import ScriptRun


@dataclass
class Checked:
    """One script's run and what its entry's contract asks of it here."""

    id: str
    role: str  # snippet | check
    path: Path
    entry: KnownIssue | None
    terms: Contract
    run: ScriptRun
    missing: list[str]

    @property
    def holds(self) -> bool | None:
        if self.missing:
            return None
        return not self.run.timed_out and self.terms.holds(self.run.exit, self.run.traceback)

    @property
    def fixed_upstream(self) -> bool:
        return self.terms.exits == {1} and self.run.exit == 0

    def verdict(self) -> str:
        if self.missing:
            return f"not run: {', '.join(self.missing)} not installed"
        if self.run.timed_out:
            return f"FAILS: timed out after {self.run.seconds:.0f} s"
        if self.run.traceback:
            return "FAILS: a Python traceback"
        if self.fixed_upstream:
            return "FAILS: exit 0 where the entry applies (fixed upstream?)"
        if not self.holds:
            return f"FAILS: {self.run.ending()}"
        return "holds"

    def row(self) -> dict[str, Any]:
        source = self.path.read_text(encoding="utf-8")
        return {"id": self.id, "role": self.role, "script": str(self.path), "entry": self.entry.id if self.entry else None,
                "exit": self.run.exit, "timed_out": self.run.timed_out, "traceback": self.run.traceback,
                "seconds": round(self.run.seconds, 1), "wants": sorted(self.terms.exits), "why": self.terms.why,
                "holds": self.holds, "fixed_upstream": self.fixed_upstream, "verdict": self.verdict(),
                "checked": self.entry.checked if self.entry else {}, "settings": settings_of(source),
                "docstring_problems": parse_snippet(source).problems if self.role == "snippet" else [],
                "output_tail": "\n".join(self.run.output.splitlines()[-20:])}


def subjects(root: Root) -> list[tuple[str, str, Path, KnownIssue | None]]:
    """(id, role, path, entry) of a root's snippet and checks."""
    out: list[tuple[str, str, Path, KnownIssue | None]] = []
    if root.snippet is not None:
        out.append((root.id, "snippet", root.snippet, root.primary))
    by_id = {e.id: e for e in root.entries}
    out += [(p.stem, "check", p, by_id.get(p.stem)) for p in root.checks()]
    return out


def check_one(ident: str, role: str, path: Path, entry: KnownIssue | None, timeout: float, live: LiveFacts) -> Checked:
    source = path.read_text(encoding="utf-8")
    missing = missing_imports(source)
    parsed = parse_snippet(source) if role == "snippet" else None
    snippet = parsed is not None and not parsed.legacy
    settings = settings_of(source) if snippet else {}
    if missing:
        return Checked(ident, role, path, entry, Contract(frozenset({0, 1}), "not run"), ScriptRun(note="not installed"),
                       missing)
    terms = contract(entry, live, settings, parsed.kind if snippet and parsed is not None else "")
    run = run_snippet(source, timeout) if snippet else run_check(path, timeout)
    return Checked(ident, role, path, entry, terms, run, missing)


def check(roots: list[Root], timeout: float, json_path: str | None) -> int:
    """Run each script, print a row per script as it ends and a summary; 1 if any contract fails."""
    live = LiveFacts()
    found = [s for r in roots for s in subjects(r)]
    if not found:
        print("no snippets or checks to run")
        return 0
    width = max(len(f"{role} {ident}") for ident, role, _, _ in found)
    print(f"{'script':<{width}}  exit  wants  {'seconds':>7}  contract (why)")
    results = []
    for ident, role, path, entry in found:
        c = check_one(ident, role, path, entry, timeout, live)
        results.append(c)
        code = "-" if c.run.exit is None else "kill" if c.run.timed_out else str(c.run.exit)
        wants = "|".join(map(str, sorted(c.terms.exits))) + ("|sig" if c.terms.signal_ok else "")
        print(f"{role + ' ' + ident:<{width}}  {code:>4}  {wants:>5}  {c.run.seconds:>7.1f}  {c.verdict()} ({c.terms.why})",
              flush=True)
    fails = [c for c in results if c.holds is False]
    skipped = [c for c in results if c.holds is None]
    print(f"{len(results)} scripts: {len(results) - len(fails) - len(skipped)} hold, {len(fails)} fail, "
          f"{len(skipped)} not run; {sum(c.fixed_upstream for c in results)} exit 0 where their entry applies")
    if json_path:
        doc = {"date": datetime.date.today().isoformat(), "host": {**cpu_facts(), "settings": env_settings()},
               "convdiff": version("convdiff"), "scripts": [c.row() for c in results]}
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return 1 if fails else 0
