"""`convdiff scope`: infer when a target's failures show (`--backends SPEC`), or check known issues'
selectors (`--check ID`, `--check-all`). Exit status: 0 when a scope was written for every group (every
checked entry applies and holds), 1 when not, or when the target is broken; 2 for bad input or usage."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from backends.registry import UnknownBackend, get_backend, parse_backends
from harness.commands.scope.infer import EXPLORE_SHARE, Inference
from harness.commands.scope.runs import (
    Runs,
    ScopeUsage,
)
from harness.commands.scope.write import write_scope
from harness.judge.known_issues import layered
from harness.model.loader import case_files, load_cases


def add_parser(sub: Any) -> None:
    sc = sub.add_parser("scope", help="infer, and test on fresh cases, when each group of a target's failures shows "
                        "(scope.yaml, scope.md); or check known issues' selectors (--check ID, --check-all)")
    sc.add_argument("cases", nargs="*", help="case files or directories to start from (default: cases drawn by the "
                    "fuzz generator for part of --time)")
    sc.add_argument("--backends", help="the target: one backend name, module:Class or name=module:Class "
                    "(with --check: only the entries naming these backends)")
    sc.add_argument("--known-issues", action="append", default=[], metavar="FILE",
                    help="a known-issues file of your own (repeatable), matched before convdiff's own")
    sc.add_argument("--time", type=float, default=300.0, help="seconds for the whole command after the workers start "
                    "(default 300; with --check-all, per backend family the seconds are shared out)")
    sc.add_argument("--seed", type=int, default=0, help="seed of the fresh cases (the same seed draws the same ones)")
    sc.add_argument("--out", default="reports/scope", help="output directory (default: reports/scope)")
    sc.add_argument("--timeout", type=float, default=60.0, help="seconds a single case may take (default 60)")
    check = sc.add_mutually_exclusive_group()
    check.add_argument("--check", action="append", metavar="ID", help="check this known issue's selector: sample "
                       "cases inside and just outside it on the targets it names, say too broad / too narrow")
    check.add_argument("--check-all", action="store_true", help="check every known issue that applies on this host")
    sc.add_argument("--per-entry", type=int, default=16, metavar="N",
                    help="with --check: fresh cases inside, and as many just outside, per entry (default 16)")


def cmd_scope(args: argparse.Namespace, argv: list[str]) -> int:
    if args.time <= 0 or args.per_entry < 1:
        raise ScopeUsage("--time and --per-entry must be positive")
    if args.check or args.check_all:
        from harness.commands.scope.check import run_checks

        return run_checks(args, argv)
    if not args.backends:
        raise ScopeUsage("name the target: --backends NAME (or --check ID / --check-all)")
    try:
        backends = parse_backends(args.backends)
    except UnknownBackend as exc:
        raise ScopeUsage(str(exc)) from None
    if len(backends) != 1:
        raise ScopeUsage("scope infers one target at a time: give --backends one name")
    backend = backends[0]
    if "cpu" not in get_backend(backend).capabilities.devices:
        raise ScopeUsage(f"{backend} has no cpu device")
    cases = [c for c in load_cases(args.cases)] if args.cases else []
    dirs = list(dict.fromkeys(f.parent for f in case_files(args.cases))) if args.cases else []
    known = layered(args.known_issues, dirs, [get_backend(backend).known_issues_path()])
    out = Path(args.out)
    print(f"convdiff scope: {backend}, {len(cases) or 'generated'} cases, {args.time:g} s, seed {args.seed} -> {out}/",
          file=sys.stderr)
    runs = Runs([(backend, "cpu")], known, out, args.timeout)
    start = time.monotonic()
    if not runs.ready:
        runs.stop()
        why = {**runs.info.broken, **runs.info.skipped}
        print(f"convdiff scope: {backend} did not start: {'; '.join(why.values()) or 'unavailable'}", file=sys.stderr)
        return 1
    inference = Inference(runs, args.seed, start + args.time, log=lambda m: print(m, file=sys.stderr, flush=True))
    try:
        inference.start(cases, start + EXPLORE_SHARE * args.time)
        groups = inference.infer()
    finally:
        seconds = time.monotonic() - start
        runs.stop()
    selected = {g.key: sum(g.rule.selects(p) for p in inference.data.params) for g in groups.values() if g.rule}
    yml, md = write_scope(out, backend, "cpu", list(groups.values()), selected, inference.rounds,
                          len(runs.records), seconds)
    summary = runs.write_outputs(argv)
    for g in groups.values():
        state = "confirmed" if g.confirmed else "not confirmed"
        c = g.fresh
        print(f"{g.key}: {g.rule.words if g.rule else 'no rule'} [{state}; fresh: {c.fails_inside} fail / "
              f"{c.passes_inside} pass inside, {c.fails_outside} fail / {c.passes_outside} pass outside]")
    print(f"{len(groups)} group(s), {len(runs.records)} results in {seconds:.0f} s; wrote {yml} and {md}")
    if summary.get("broken_targets"):
        return 1
    return 0 if all(g.rule and g.rule.terms for g in groups.values()) else 1
