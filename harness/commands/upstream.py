"""`convdiff upstream`: the upstream-ready report of a known issue, and the check of every hand-written reproducer.

    convdiff upstream ID [--out DIR] [--known-issues FILE]... [--no-run] [--timeout S]
    convdiff upstream --all --out DIR [--known-issues FILE]... [--no-run] [--timeout S]
    convdiff upstream --check [--json FILE] [--known-issues FILE]... [--timeout S]

ID is a known issue's id (convdiff's own database, then the user's files, matched as `convdiff run` layers them)
or the name of a script in an `upstream/` folder beside a known-issues file. The report (markdown, to stdout or
DIR/<ID>.md) is built by harness/commands/upstream_build.py and rendered by reports/upstream.py; whether an
entry applies on this host is harness/commands/upstream_contract.py's. `--all` writes
the report of every script in those folders. `--check` runs every script in a fresh interpreter and says, per
script, its exit status and whether the exit contract of cases/upstream/README.md holds on this host: exit 1
where its entry applies (its host selector matches the live facts, or it has none, and `pass` is not among
its outcomes), 0 or 1 elsewhere, never a traceback. A script that exits 0 where its entry applies is marked
"fixed upstream?". Exit status: 0 when every contract holds, 1 otherwise, 2 for bad input.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.commands.upstream_build import (
    from_script,
    from_witness,
    imported,
    run_script,
    script_versions,
    upstream_dir,
)
from harness.commands.upstream_contract import Contract, LiveFacts, contract
from harness.execution.host import cpu_facts, env_settings
from harness.judge.known_issues import KnownIssue, KnownIssues, layered, project_known_issues
from reports.upstream import Report, ScriptRun, parse_docstring, render

_STDLIB = frozenset(sys.stdlib_module_names)


class UpstreamUsage(Exception):
    """Bad input: one line, exit status 2."""


def add_parser(sub: Any) -> None:
    up = sub.add_parser("upstream", help="write the upstream-ready report of a known issue, or check every "
                        "reproducer in cases/upstream/")
    up.add_argument("id", nargs="?", help="a known issue's id, or the name of a script in cases/upstream/")
    what = up.add_mutually_exclusive_group()
    what.add_argument("--all", action="store_true", help="the report of every script in cases/upstream/ (needs --out)")
    what.add_argument("--check", action="store_true",
                      help="run every script in cases/upstream/: its exit status, and whether its known issue's "
                           "exit contract holds on this host")
    up.add_argument("--out", help="write DIR/<id>.md (default: the report goes to stdout)")
    up.add_argument("--known-issues", action="append", default=[], metavar="FILE",
                    help="a known-issues file of your own (repeatable), looked up before convdiff's own")
    up.add_argument("--no-run", action="store_true",
                    help="render only: run no script, case or worker (the output section says so)")
    up.add_argument("--timeout", type=float, default=300.0, help="seconds a script may run (default 300)")
    up.add_argument("--json", help="with --check: also write the results to this JSON file")


def cmd_upstream(args: argparse.Namespace, argv: list[str]) -> int:
    try:
        return _dispatch(args)
    except UpstreamUsage as exc:
        print(f"convdiff: error: {exc}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace) -> int:
    if args.json and not args.check:
        raise UpstreamUsage("--json goes with --check")
    if (args.all or args.check) and args.id:
        raise UpstreamUsage(f"give an ID or {'--all' if args.all else '--check'}, not both")
    if not (args.all or args.check or args.id):
        raise UpstreamUsage("give a known issue's ID, --all or --check")
    if args.all and not args.out:
        raise UpstreamUsage("--all writes one file per report: give --out DIR")
    if args.timeout <= 0:
        raise UpstreamUsage("--timeout must be a positive number of seconds")
    known = layered(args.known_issues, [])  # a missing file: InputError, one line and exit 2 (cli.main)
    if args.check:
        found = scripts(known)
        if not found:
            raise UpstreamUsage("no scripts in any upstream/ folder beside the known-issues files")
        return check(found, args.timeout, args.json)
    live = None if args.no_run else LiveFacts()
    subjects = scripts(known) if args.all else [resolve(args.id, known)]
    for ident, path, entry in subjects:
        report = build(ident, path, entry, not args.no_run, args.timeout, live)
        text = render(report)
        if args.out is None:
            print(text, end="")
            continue
        out = Path(args.out) / f"{ident}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}: {report.run.verdict()}")
    return 0


def build(ident: str, path: Path | None, entry: KnownIssue | None, run: bool, timeout: float,
          live: LiveFacts | None) -> Report:
    """One report: from the hand-written script where there is one, else from the entry's witness case."""
    if path is not None:
        return from_script(ident, path, entry, run, timeout, live)
    assert entry is not None
    return from_witness(entry, run, timeout, live)


def entry_of(ident: str, known: KnownIssues) -> KnownIssue | None:
    """The entry a script belongs to: the one of its id, else one that names it as a further reproducer
    (`cases/upstream/<ident>.py` in its reason or link: one entry, two scripts)."""
    named = next((e for e in known.entries if e.id == ident), None)
    return named or next((e for e in known.entries if f"upstream/{ident}.py" in f"{e.reason} {e.link}"), None)


def resolve(ident: str, known: KnownIssues) -> tuple[str, Path | None, KnownIssue | None]:
    """(id, its script or None, its entry or None); neither: bad input."""
    entry = entry_of(ident, known)
    folder = upstream_dir(entry)
    path = folder / f"{ident}.py" if folder is not None else None
    if path is not None and path.is_file():
        return ident, path, entry
    if entry is None:
        raise UpstreamUsage(f"no known issue '{ident}' in {', '.join(known.sources) or 'any known-issues file'}, "
                            "and no script of that name in cases/upstream/")
    return ident, None, entry


def scripts(known: KnownIssues) -> list[tuple[str, Path, KnownIssue | None]]:
    """Every script in the upstream/ folders beside the known-issues files, with its entry (entry_of)."""
    folders = dict.fromkeys(Path(s).parent / "upstream" for s in [*known.sources, str(project_known_issues() or "")] if s)
    found: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            found.setdefault(path.stem, path)
    return [(ident, path, entry_of(ident, known)) for ident, path in sorted(found.items())]


# --- --check ------------------------------------------------------------------------------------------------


@dataclass
class Checked:
    """One script's check: its run and what its entry's contract asks of it here."""

    id: str
    path: Path
    entry: KnownIssue | None
    terms: Contract
    run: ScriptRun
    missing: list[str]  # packages it imports that are not installed (then it is not run)

    @property
    def holds(self) -> bool | None:
        if self.missing:
            return None
        return not self.run.timed_out and self.run.exit in self.terms.exits and not self.run.traceback

    @property
    def fixed_upstream(self) -> bool:
        """Exit 0 where the entry applies: the defect no longer shows (or the script lost it)."""
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
        if self.run.exit not in self.terms.exits:
            return f"FAILS: exit status {self.run.exit}" + (" (a signal)" if (self.run.exit or 0) < 0 else "")
        return "holds"

    def row(self) -> dict[str, Any]:
        source = self.path.read_text(encoding="utf-8")
        return {"id": self.id, "script": str(self.path), "entry": self.entry is not None,
                "exit": self.run.exit, "timed_out": self.run.timed_out, "traceback": self.run.traceback,
                "seconds": round(self.run.seconds, 1), "wants": sorted(self.terms.exits), "why": self.terms.why,
                "holds": self.holds, "fixed_upstream": self.fixed_upstream, "verdict": self.verdict(),
                "versions": script_versions(source), "checked": self.entry.checked if self.entry else {},
                "docstring_problems": parse_docstring(source).problems,
                "output_tail": "\n".join(self.run.output.splitlines()[-20:])}


def missing_imports(path: Path) -> list[str]:
    """Top-level third-party packages the script imports that are not installed here."""
    modules = imported(path.read_text(encoding="utf-8"))
    return [m for m in modules if m not in _STDLIB and importlib.util.find_spec(m) is None]


def check_one(ident: str, path: Path, entry: KnownIssue | None, timeout: float, live: LiveFacts) -> Checked:
    missing = missing_imports(path)
    terms = contract(entry, live) if not missing else Contract(frozenset({0, 1}), "not run")
    run = ScriptRun(note="not installed") if missing else run_script(path, timeout)
    return Checked(ident, path, entry, terms, run, missing)


def check(found: list[tuple[str, Path, KnownIssue | None]], timeout: float, json_path: str | None) -> int:
    """Run each script, print a table row per script as it ends and a summary; 1 if any contract fails."""
    live = LiveFacts()
    results: list[Checked] = []
    width = max(len(ident) for ident, _, _ in found)
    print(f"{'script':<{width}}  exit  wants  {'seconds':>7}  contract (why)")
    for ident, path, entry in found:
        c = check_one(ident, path, entry, timeout, live)
        results.append(c)
        code = "-" if c.run.exit is None else "kill" if c.run.timed_out else str(c.run.exit)
        wants = "|".join(map(str, sorted(c.terms.exits)))
        print(f"{ident:<{width}}  {code:>4}  {wants:>5}  {c.run.seconds:>7.1f}  {c.verdict()} ({c.terms.why})", flush=True)
    fails = [c for c in results if c.holds is False]
    skipped = [c for c in results if c.holds is None]
    print(f"{len(results)} scripts: {len(results) - len(fails) - len(skipped)} hold, {len(fails)} fail, "
          f"{len(skipped)} not run; {sum(c.fixed_upstream for c in results)} exit 0 where their entry applies")
    if json_path:
        doc = {"date": datetime.date.today().isoformat(), "host": {**cpu_facts(), "settings": env_settings()},
               "facts": live.seen, "scripts": [c.row() for c in results]}
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return 1 if fails else 0
