"""`convdiff upstream`: the upstream report of a root cause, and the checks that keep every report honest.

    convdiff upstream ID... [--out DIR] [--no-run] [--others LIST]  the report of the root each ID names;
                                                                    --no-run never replaces a report holding a run
    convdiff upstream ID --scope SECONDS [--out DIR]                first infer and test where it shows (scope_rule.py)
    convdiff upstream --all --out DIR [--no-run]                    one report per root that has a snippet
    convdiff upstream ID --draft                                    a draft snippet from the witness case
    convdiff upstream ID|--all --latest [--record]                  the snippet against the newest PyPI release
    convdiff upstream --check [--json FILE]                         every snippet and check against its contract

The pipeline runs one way, entry -> witness run -> snippet -> body -> details: subjects.py finds the root and
its files, witness.py runs the witness case on every installed implementation, build.py assembles the report
(the snippet run here, the environment read live from the tracker's framework), reports/upstream/ renders it.
check.py holds the scripts to their exit contract (contract.py), latest.py runs them against the newest
release. Exit status: 0; 1 when a contract fails (--check) or --no-run kept a report that holds a run; 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.commands.upstream.subjects import Root, UpstreamUsage, resolve, tally, with_reports
from harness.judge.known_issues import KnownIssues, layered


def add_parser(sub: Any) -> None:
    up = sub.add_parser("upstream", help="write the upstream report of a known issue's root cause, or check "
                        "every report's scripts in cases/upstream/")
    up.add_argument("id", nargs="*", help="known issues' or roots' ids (one report per root cause; several: one "
                    "witness pass for all of them)")
    what = up.add_mutually_exclusive_group()
    what.add_argument("--all", action="store_true", help="one report per root that has a snippet (with --out, or "
                      "with --latest)")
    what.add_argument("--check", action="store_true", help="run every snippet and full check in cases/upstream/: "
                      "its exit status, and whether its known issue's exit contract holds on this host")
    what.add_argument("--draft", action="store_true", help="print a draft snippet (the code part of <root>.py) "
                      "from the witness case and the framework's reproducer template")
    up.add_argument("--latest", action="store_true", help="run the snippet against the newest release of its "
                    "framework on PyPI (a throwaway virtualenv, cached under .convdiff-cache)")
    up.add_argument("--record", action="store_true", help="with --latest: write the result into the entries' "
                    "latest: field")
    up.add_argument("--out", help="write DIR/<root>.md (default: the report goes to stdout)")
    up.add_argument("--known-issues", action="append", default=[], metavar="FILE",
                    help="a known-issues file of your own (repeatable), looked up before convdiff's own")
    up.add_argument("--no-run", action="store_true", help="render only: run no snippet, case or worker (the output "
                    "block says 'not run'); with --out it never replaces a <root>.md that holds a run's output: that "
                    "report is kept and named, and the exit status is 1")
    up.add_argument("--others", metavar="LIST", help="the implementations the witness case runs on (default: every "
                    "installed one)")
    up.add_argument("--scope", type=float, metavar="SECONDS", help="first infer where the defect shows and test that "
                    "rule on fresh cases for SECONDS (convdiff scope's inference, on the primary entry's target); kept "
                    "in DIR/scope/<root>.json beside the snippet, and said in the report only where confirmed")
    up.add_argument("--fresh", action="store_true", help="run the witness case again even where its results are "
                    "cached (.convdiff-cache/upstream-witness/: keyed by the case, the settings and every version)")
    up.add_argument("--timeout", type=float, default=300.0, help="seconds a script may run (default 300)")
    up.add_argument("--json", help="with --check or --latest: also write the results to this JSON file")
    up.add_argument("--venvs", metavar="DIR", help="with --latest: where the throwaway virtualenvs live (default: "
                    ".convdiff-cache/latest-venvs, kept for the next run)")


def cmd_upstream(args: argparse.Namespace, argv: list[str]) -> int:
    try:
        return _dispatch(args)
    except UpstreamUsage as exc:
        print(f"convdiff: error: {exc}", file=sys.stderr)
        return 2


def _usage(args: argparse.Namespace) -> None:
    if args.json and not (args.check or args.latest):
        raise UpstreamUsage("--json goes with --check or --latest")
    if args.venvs and not args.latest:
        raise UpstreamUsage("--venvs goes with --latest")
    if args.record and not args.latest:
        raise UpstreamUsage("--record goes with --latest")
    if (args.all or args.check) and args.id:
        raise UpstreamUsage(f"give an ID or {'--all' if args.all else '--check'}, not both")
    if not (args.all or args.check or args.id):
        raise UpstreamUsage("give a known issue's ID, --all or --check")
    if args.draft and len(args.id) != 1:
        raise UpstreamUsage("--draft needs one ID")
    if args.all and not (args.out or args.latest):
        raise UpstreamUsage("--all writes one file per report: give --out DIR")
    if args.timeout <= 0:
        raise UpstreamUsage("--timeout must be a positive number of seconds")
    if args.scope is not None and (args.scope <= 0 or args.no_run or args.check or args.draft or args.latest):
        raise UpstreamUsage("--scope takes a positive number of seconds, and goes with a report that runs (not "
                            "--no-run, --check, --draft or --latest)")


def _dispatch(args: argparse.Namespace) -> int:
    _usage(args)
    known = layered(args.known_issues, [])  # a missing file: InputError, one line and exit 2 (cli.main)
    if args.check:
        from harness.commands.upstream.check import check

        return check(with_reports(known), args.timeout, args.json)
    named = {r.id: r for r in (resolve(i, known) for i in args.id)}  # ids of one root: one report
    subjects = with_reports(known) if args.all else list(named.values())
    if args.draft:
        return _draft(subjects[0])
    if args.latest:
        return _latest(subjects, args, known)
    return _reports(subjects, known, args)


def _reports(subjects: list[Root], known: KnownIssues, args: argparse.Namespace) -> int:
    from harness.commands.upstream.build import build
    from reports.upstream.body import ran, render

    if args.scope is not None:
        _scopes(subjects, known, args.scope, args.timeout)
    others, witnesses = ({}, {}) if args.no_run else _witness_runs(subjects, args.others, known, args.fresh)
    kept = 0
    for root in subjects:
        out = Path(args.out) / f"{root.id}.md" if args.out is not None else None
        if args.no_run and out is not None and out.is_file() and ran(out.read_text(encoding="utf-8")):
            print(f"kept {out}: it holds its snippet's output from a run, which --no-run would drop (without --out "
                  "the render goes to stdout)", file=sys.stderr)
            kept += 1
            continue
        report = build(root, not args.no_run, args.timeout, others.get(root.id), witnesses.get(root.id))
        text = render(report)
        if out is None:
            print(text, end="")
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}: {report.run.verdict()}")
    if args.all:
        print(tally(known))
    return 1 if kept else 0


def _scopes(subjects: list[Root], known: KnownIssues, seconds: float, timeout: float) -> None:
    """Infer and test each root's scope on fresh cases, under the settings its snippet makes, and keep it beside
    its snippet (scope_rule.py)."""
    from harness.commands.upstream.scope_rule import infer, store
    from harness.commands.upstream.scripts import environ, settings_of

    for root in subjects:
        if root.primary is None:
            continue
        source = root.snippet.read_text(encoding="utf-8") if root.snippet is not None else ""
        with environ(settings_of(source)):  # the settings the snippet makes, as for the witness run
            tested = infer(root.primary, known, seconds, timeout=min(timeout, 60.0),
                           log=lambda m, r=root.id: print(f"{r}: {m}", file=sys.stderr, flush=True))
        if tested is None:
            print(f"{root.id}: no result fell to {root.primary.id} on this host: no scope kept", file=sys.stderr)
            continue
        path = store(root, tested)
        print(f"{root.id}: {'confirmed' if tested.confirmed else 'NOT confirmed (not said in the report)'}: "
              f"{tested.words} [fresh: {tested.fails_inside} fail / {tested.passes_inside} pass inside, "
              f"{tested.fails_outside} fail / {tested.passes_outside} pass outside]; kept in {path}", file=sys.stderr)


def _witness_runs(subjects: list[Root], chosen: str | None, known: KnownIssues, fresh: bool) -> tuple[dict, dict]:
    """(root -> Others, root -> Witness): every root's witness, run in one pass per settings (workers stay warm)."""
    from backends.registry import parse_backends
    from harness.commands.upstream.scripts import settings_of
    from harness.commands.upstream.witness import implementations, run_witnesses, witness
    from reports.upstream.docstring import parse_snippet

    backends = implementations(parse_backends(chosen) if chosen else None)
    groups: dict[tuple, dict] = {}
    for root in subjects:
        if root.primary is None:
            continue
        source = root.snippet.read_text(encoding="utf-8") if root.snippet is not None else ""
        w = witness(root.primary, known, parse_snippet(source).ops if source else set())
        if w is None:
            continue
        settings = settings_of(source)
        groups.setdefault(tuple(sorted(settings.items())), {})[root.id] = w
    out: dict = {}
    for settings, witnesses in groups.items():
        out.update(run_witnesses(witnesses, dict(settings), backends, known, fresh=fresh))
    return out, {root: w for witnesses in groups.values() for root, w in witnesses.items()}


def _draft(root: Root) -> int:
    from harness.commands.upstream.witness import witness
    from reports.repro.script import ReproUnavailable, case_of, find_record
    from reports.repro.snippet import draft

    entry = root.primary
    w = witness(entry) if entry is not None else None
    if entry is None or w is None:
        raise UpstreamUsage(f"'{root.id}' has no entry whose selector matches a case of the corpus: no witness to "
                            "draft from")
    try:
        rec = find_record(f"{Path(w.case.file).name}::{w.case.id}", w.backend, w.device, [w.case.file], output=w.output)
    except ReproUnavailable as exc:
        raise UpstreamUsage(str(exc)) from None
    print(draft(rec, case_of(rec), entry.host), end="")
    print(f"# drafted from {Path(w.case.file).name}::{w.case.id} on {w.backend} ({rec.status})", file=sys.stderr)
    return 0


def _latest(subjects: list[Root], args: argparse.Namespace, known: KnownIssues) -> int:
    import datetime
    import json

    from backends.artifacts import cache_base
    from harness.commands.upstream.latest import VENVS, record_latest, run_latest

    venvs = Path(args.venvs) if args.venvs else (cache_base() or Path(".convdiff-cache")) / VENVS
    rows = []
    for root in subjects:
        if root.snippet is None or not root.entries:
            continue
        done = run_latest(root, venvs.resolve(), args.timeout)
        print(done.line(), flush=True)
        rows.append({"root": root.id, "entries": [e.id for e in root.entries], "package": done.package,
                     "newest": done.newest, "ran": done.ran, "result": done.latest.result, "note": done.latest.note,
                     "output_tail": "\n".join(done.output.splitlines()[-20:])})
        if args.record and done.latest.result != "not-run":
            by_file: dict[str, list[str]] = {}
            for e in root.entries:
                by_file.setdefault(e.source, []).append(e.id)
            for source, ids in by_file.items():
                written = record_latest(Path(source), ids, done.latest)
                print(f"  recorded in {source}: {', '.join(written)}")
        if done.latest.result == "fixed":
            print(f"  fixed in {done.package} {done.ran}: set fixed_in and narrow the entries to the versions "
                  "that show it")
    if args.all:
        print(f"{len(rows)} reports checked against the newest releases: "
              f"{sum(r['result'] == 'shows' for r in rows)} still show, {sum(r['result'] == 'fixed' for r in rows)} "
              f"fixed, {sum(r['result'] == 'not-run' for r in rows)} not run")
    if args.json:
        doc = {"date": datetime.date.today().isoformat(), "reports": rows}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


def repro_issue(rec: Any, timeout: float) -> str:
    """`convdiff repro --issue`: one result's issue text (reports/upstream/result.py), its script run here."""
    from backends.registry import get_backend
    from harness.commands.upstream.environment import facts_for
    from harness.commands.upstream.scripts import run_snippet
    from reports.repro.issue import expected_vs_actual, record_title
    from reports.repro.script import ReproUnavailable, script_for
    from reports.upstream.model import ScriptRun
    from reports.upstream.result import render_result

    adapter = get_backend(rec.backend)
    facts = facts_for("", {}, (adapter.distribution or adapter.framework,), run=False)
    source = (f"Case `{rec.case_id}` on {rec.backend} ({rec.device})"
              + ("" if rec.output == "out" else f", {rec.output}") + ".")
    try:
        script = script_for(rec)
    except ReproUnavailable as exc:
        return render_result(record_title(rec), facts, "", ScriptRun(note=f"no standalone reproducer: {exc}"),
                             expected_vs_actual(rec), source)
    return render_result(record_title(rec), facts, script, run_snippet(script, timeout), expected_vs_actual(rec), source)
