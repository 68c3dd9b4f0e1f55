"""`convdiff` command line. Exit status: 0 clean, 1 unexpected findings, 2 bad input or usage."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from backends.registry import UnknownBackend, get_backend, installed_backends, parse_backends, real_backends
from harness.commands import ownership
from harness.commands.extract.command import add_parser as add_extract_parser
from harness.commands.extract.command import cmd_extract
from harness.commands.listing import cmd_backends
from harness.commands.run_outputs import write_run_outputs
from harness.commands.selection import (
    DEVICES,
    SAMPLE_MAX_MACS,
    compiled_sample,
    default_cases,
    in_sample,
    known_issues_for,
    resolve_targets,
    select_tier,
    stale_entries,
    with_gradients,
)
from harness.commands.validate import cmd_validate
from harness.execution.host import cpu_facts, gpu_present
from harness.execution.preloads import for_gradients, prestart
from harness.execution.progress import Progress
from harness.execution.records import JsonlSink, Record
from harness.execution.relation_exec import RelationPlan
from harness.execution.runner import run_cases
from harness.judge.drift import format_drift
from harness.judge.known_issues import shown
from harness.judge.summary import exit_status, format_problems, format_table
from harness.judge.verdict import Verdicts
from harness.model.case import OUTPUTS, Case
from harness.model.loader import load_cases
from harness.model.shard import parse_shard, shard
from harness.model.yamlmap import InputError
from harness.numerics.relations import RelationError, parse_relations


class UsageError(Exception):
    pass


def cmd_run(args: argparse.Namespace, argv: list[str]) -> int:
    paths = args.cases or [default_cases()]
    all_cases = load_cases(paths)
    cases = select_tier(all_cases, args.tier)
    if args.gradients:
        cases = with_gradients(cases)
    if args.shard:
        try:
            cases = shard(cases, *parse_shard(args.shard))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    os.environ["CONVDIFF_TF32"] = args.tf32  # read by the CUDA paths of torch and TensorFlow workers
    try:
        backends = parse_backends(args.backends) if args.backends else installed_backends()
    except UnknownBackend as exc:
        raise UsageError(str(exc)) from None
    targets = resolve_targets(backends, args.device)
    if not targets:
        raise UsageError(f"no backend can run on device '{args.device}'")
    if cases:  # the templates import their frameworks while this process reads the known issues and plans
        for_gradients(args.gradients)  # as launch.main decided it from the command line
        prestart([b for b, d in targets if d == "cpu" or not gpu_present()])
    known = known_issues_for(paths, args.known_issues, backends)
    requirements, plan = relation_options(args)
    out = Path(args.out)
    sink = JsonlSink(out / "results.jsonl")
    records: list[Record] = []
    select, sampled = compiled_sample(cases, [b for b, _ in targets], args.compiled_sample)
    progress = Progress({f"{b}-{d}": sum(1 + len(c.gradient_outputs) + len(plan.for_case(c, b) if plan else ())
                                         for c in cases if select is None or select(b, c))
                         for b, d in targets})

    def collect(rec: Record) -> None:
        sink(rec)
        records.append(rec)
        progress.update(rec.status, f"{rec.backend}-{rec.device}")

    print(f"convdiff: {len(cases)} cases x {len(targets)} targets -> {out}/", file=sys.stderr)
    if sampled:
        print(f"convdiff: --compiled-sample {args.compiled_sample}: {', '.join(sorted(sampled))} run "
              f"{sum(select(sampled[0], c) for c in cases) if select else len(cases)} of the {len(cases)} cases "
              "(a fixed 1/N: make test runs the smoke tier on every backend)", file=sys.stderr)
    try:
        info = run_cases(cases, targets, collect, Verdicts(known), timeout=args.timeout, jobs=args.jobs, select=select,
                         relations=plan)
    finally:
        sink.close()
        progress.close()
    for target, reason in info.skipped.items():
        print(f"skipped {target}: {reason}", file=sys.stderr)
    named = backends if args.backends else []
    summary = write_run_outputs(out, records, info, argv, known, stale_entries(known, paths, all_cases), named=named,
                                extra={**({"builds": info.builds} if info.builds else {}),
                                       **({"memory_retires": info.memory_retires} if info.memory_retires else {})} or None)
    print(format_table(summary))
    if summary["drift"]:
        print("\nnormalized error e = max |err| / (u * scale) by kernel size (theory: e <= 4*sqrt(K)):")
        print(format_drift(summary["drift"]))
    for entry_id in summary["stale_known_issues"]:
        where = shown(summary["known_issues"].get(entry_id, ["", "", "?"])[2])
        print(f"warning: known issue '{entry_id}' ({where}) matches no case of the corpus", file=sys.stderr)
    problems = format_problems(summary)
    if problems:
        print(problems)
    return max(exit_status(summary), gate(records, out, requirements))


def relation_options(args: argparse.Namespace) -> tuple[list[tuple[str, tuple[str, ...]]], RelationPlan | None]:
    """--require's requirements, and the relations to judge: --relations and every relation --require names,
    on the fixed 1/N sample of --relations-sample (None: no relation)."""
    from reports.properties import RequirementError, parse_requirements

    try:
        requirements = parse_requirements(args.require)
        names = parse_relations(args.relations) if args.relations else ()
    except (RequirementError, RelationError) as exc:
        raise UsageError(str(exc)) from None
    names = tuple(dict.fromkeys([*names, *(r for _, rels in requirements for r in rels)]))
    if not names:
        return requirements, None
    n, m = args.relations_sample, args.relations_compiled_sample or args.relations_sample
    compiled = {b for b in real_backends() if get_backend(b).builds_per_case}

    def chosen(backend: str, case: Case) -> bool:
        k = m if backend in compiled else n
        return k <= 1 or in_sample(case, k)

    return requirements, RelationPlan(tuple(r for r in parse_relations("all") if r in names),
                                      None if n <= 1 and m <= 1 else chosen)


def gate(records: list[Record], out: Path, requirements: list[tuple[str, tuple[str, ...]]]) -> int:
    """The property table in one line where the run judged relations; then --require: 1 with one line per
    requirement the table does not meet (reports/properties.py)."""
    from reports.properties import properties, unmet

    table = properties(records)
    if table["targets"]:
        cells = [(t, r, d, c["property"]) for t, rels in table["targets"].items() for r, by in rels.items()
                 for d, c in by.items()]
        n = {p: sum(c[3] == p for c in cells) for p in ("bitwise", "within_bound", "violated", "unsupported")}
        print(f"properties ({out / 'properties.json'}): {len(cells)} target x relation x dtype cells, "
              + ", ".join(f"{k} {v}" for k, v in n.items() if v))
    lines = unmet(table, requirements) if requirements else []
    for line in lines:
        print(line)
    return 1 if lines else 0


def jobs_arg(text: str) -> int:
    """--jobs N or --jobs auto (the cores this process may use, as host facts count them)."""
    if text == "auto":
        return int(cpu_facts()["cores"])
    return positive_int(text, "a number or 'auto'")


def positive_int(text: str, expected: str = "a whole number") -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got '{text}'") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def cmd_report(args: argparse.Namespace, argv: list[str]) -> int:
    from reports.merge import build_report

    missing = [p for p in [*args.results, *([args.baseline] if args.baseline else [])] if not Path(p).exists()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    # a run's --out directory stands for its results.jsonl
    results = [Path(p) / "results.jsonl" if Path(p).is_dir() else Path(p) for p in args.results]
    empty = [str(p.parent) for p in results if not p.is_file()]
    if empty:
        raise UsageError(f"no results.jsonl in: {', '.join(empty)}")
    return build_report(results, Path(args.out), argv,
                        Path(args.baseline) if args.baseline else None)


def cmd_repro(args: argparse.Namespace, argv: list[str]) -> int:
    from reports.repro.script import ReproUnavailable, find_record, script_for

    args.backend = parse_backends(args.backend)[0]  # unknown names are usage errors; module:Class registers
    try:
        rec = find_record(args.case_id, args.backend, args.device, args.cases or [default_cases()], args.results,
                          args.output)
        if args.issue:  # the text around the script, which runs here (harness/commands/upstream/)
            from harness.commands.upstream import repro_issue

            print(repro_issue(rec, timeout=300.0), end="")
            return 0
        script = script_for(rec)
    except ReproUnavailable as exc:
        raise UsageError(str(exc)) from None
    print(script, end="")
    print(f"# convdiff: {rec.file}::{rec.case_id} on {rec.backend}-{rec.device}: {rec.status} {rec.message}",
          file=sys.stderr)
    return 0


def cmd_selftest(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.commands.selftest import format_selftest, run_selftest

    references = parse_backends(args.backends) if args.backends else None
    from harness.commands.selftest import MUTANTS, REFERENCE

    print(f"convdiff selftest: {', '.join(references or [REFERENCE])} must be clean beside {len(MUTANTS)} "
          f"mutant:<bug> backends, on the smoke tier of {' '.join(args.cases or [default_cases()])} (minutes)",
          file=sys.stderr)
    result = run_selftest(args.cases or [default_cases()], timeout=args.timeout, jobs=args.jobs, references=references)
    print(format_selftest(result))
    return 0 if result.ok else 1


def cmd_minimize(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.commands.minimize import MinimizeError, case_size, find_case, minimize, write_outputs

    args.backend = parse_backends(args.backend)[0]  # unknown names are usage errors; module:Class registers
    try:
        case = find_case(args.case_id, args.cases or [default_cases()])
        result = minimize(case, args.backend, args.device, timeout=args.timeout, output=args.output)
    except MinimizeError as exc:
        raise UsageError(str(exc)) from None
    rec = result.record
    print(f"{case.id} on {rec.backend}-{rec.device}: {rec.status}" + (f" ({rec.diagnosis})" if rec.diagnosis else "")
          + f"; size {case_size(case)} -> {case_size(result.case)} in {result.tried} candidates, {result.seconds:.1f} s")
    for path in write_outputs(result, Path(args.out)):
        print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="convdiff", description="Differential conformance testing of convolutions.")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run cases on backends and write results, summary and reports")
    run.add_argument("cases", nargs="*", help="case files or directories (default: cases/)")
    run.add_argument("--backends", help="comma-separated backend names, module:Class or name=module:Class "
                     "(default: every installed backend)")
    run.add_argument("--known-issues", action="append", default=[], metavar="FILE",
                     help="a known-issues file of your own (repeatable), matched before convdiff's own")
    run.add_argument("--device", choices=(*DEVICES, "all"), default="cpu")
    run.add_argument("--tier", choices=("smoke", "full"), default="full")
    run.add_argument("--out", default="reports/out", help="output directory (default: reports/out)")
    run.add_argument("--jobs", type=jobs_arg, default=1,
                     help="parallel lanes, each with its own warm workers; 'auto': one per core this process may use")
    run.add_argument("--timeout", type=float, default=120.0, help="seconds a single case may take")
    run.add_argument("--shard", help="i/n: run only shard i of n (deterministic, cost-balanced)")
    run.add_argument("--tf32", choices=("on", "off"), default="off", help="allow TF32 on CUDA (default off)")
    run.add_argument("--compiled-sample", type=positive_int, default=1, metavar="N",
                     help="backends that export, convert or compile a model per case run a fixed 1/N of the cases of at most "
                          f"{SAMPLE_MAX_MACS // 10**6} M multiply-adds (default 1: every case; `make run` uses 16)")
    run.add_argument("--gradients", action="store_true",
                     help="also judge grad_input, grad_weight, grad_bias of every case (as if gradients: true)")
    run.add_argument("--relations", metavar="LIST", help="also judge these metamorphic relations, comma-separated, or "
                     "all: determinism, batch, threads, layout, scaling, adjoint, subnormal (records output "
                     "relation:<name>; DIR/properties.json)")
    run.add_argument("--relations-sample", type=positive_int, default=1, metavar="N",
                     help="judge the relations on a fixed 1/N of the cases only (the same hash as --compiled-sample; "
                          "`make run` uses 64)")
    run.add_argument("--relations-compiled-sample", type=positive_int, default=None, metavar="M",
                     help="on the backends that build a model per case (each derived run is a build), a fixed 1/M "
                          "of the cases instead (default: --relations-sample; `make run` uses 1024)")
    run.add_argument("--require", action="append", default=[], metavar="LEVEL:RELATIONS",
                     help="fail (exit 1) unless every target and dtype has this property, e.g. bitwise:batch,determinism "
                          "or within_bound:all (LEVEL bitwise or within_bound; implies --relations for them; repeatable)")
    val = sub.add_parser("validate", help="check case files and known-issues files (recognised by their issues: list)")
    val.add_argument("paths", nargs="+", help="case files, known-issues files or directories")
    val.add_argument("--backends", help="one-off adapters a known-issues file names (module:Class or name=module:Class)")
    be = sub.add_parser("backends", help="list backends, versions, devices, and why one is unavailable "
                        "(from metadata; --live starts their workers)")
    be.add_argument("--backends", help="only these backends (names, module:Class or name=module:Class)")
    be.add_argument("--live", action="store_true", help="start a worker per backend and device: the version the "
                    "framework reports, the devices usable here, host facts, setup errors (imports every framework)")
    be.add_argument("--capabilities", action="store_true", help="print what each adapter supports natively")
    be.add_argument("--probe", action="store_true",
                    help="measure it: one tiny case per capability cell (cached per framework version)")
    be.add_argument("--json", help="with --probe: also write the measured table to this JSON file")
    rep = sub.add_parser("report", help="merge results.jsonl shards and rebuild summary.json, report.html, junit.xml")
    rep.add_argument("results", nargs="+", help="results.jsonl files (shards), or the runs' --out directories")
    rep.add_argument("--out", default="reports/out", help="output directory (default: reports/out)")
    rep.add_argument("--baseline", help="an earlier summary.json (or its directory): mark findings new / still present / gone")
    rp = sub.add_parser("repro", help="print a standalone script (NumPy + the framework) reproducing one result")
    rp.add_argument("case_id", help="case id, or FILE::ID when ids repeat across files")
    rp.add_argument("--backend", required=True, help="a backend name, module:Class or name=module:Class")
    rp.add_argument("--device", choices=DEVICES, default="cpu")
    rp.add_argument("--cases", nargs="*", help="case files or directories (default: cases/)")
    rp.add_argument("--results", help="take the result from this results.jsonl instead of running the case")
    rp.add_argument("--output", choices=OUTPUTS, default="out", help="which result: out (forward) or a gradient")
    rp.add_argument("--issue", action="store_true", help="print an upstream issue text instead: title, environment, "
                    "the script, its output on this host, expected vs actual")
    st = sub.add_parser("selftest", help="run every mutant:* backend over the smoke tier: is each bug class caught and named?")
    st.add_argument("cases", nargs="*", help="case files or directories (default: cases/)")
    st.add_argument("--backends", help="the backends that must be clean beside the mutants (default: torch); "
                    "names or module:Class")
    st.add_argument("--jobs", type=jobs_arg, default=1, help="parallel lanes, each with its own warm workers, or 'auto'")
    st.add_argument("--timeout", type=float, default=120.0, help="seconds a single case may take")
    mz = sub.add_parser("minimize", help="shrink a failing case while its status and diagnosis persist")
    mz.add_argument("case_id", help="case id, or FILE::ID when ids repeat across files")
    mz.add_argument("--backend", required=True, help="a backend name, module:Class or name=module:Class")
    mz.add_argument("--device", choices=DEVICES, default="cpu")
    mz.add_argument("--cases", nargs="*", help="case files or directories (default: cases/)")
    mz.add_argument("--out", default="reports/out/minimized", help="output directory (default: reports/out/minimized)")
    mz.add_argument("--timeout", type=float, default=120.0, help="seconds a single candidate may take")
    mz.add_argument("--output", choices=OUTPUTS, default="out", help="the result to keep failing: out or a gradient")
    sub.add_parser("schema", help="print the JSON Schema of a case file (cases/case.schema.json)")
    from harness.commands.fuzz.campaign import add_parser as add_fuzz_parser
    from harness.commands.scope.command import add_parser as add_scope_parser
    from harness.commands.upstream import add_parser as add_upstream_parser

    add_fuzz_parser(sub)
    add_extract_parser(sub)
    add_upstream_parser(sub)
    add_scope_parser(sub)
    return p


def cmd_fuzz(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.commands.fuzz.campaign import FuzzUsage, run_fuzz

    try:
        return run_fuzz(args, argv)
    except FuzzUsage as exc:
        raise UsageError(str(exc)) from None


def cmd_scope(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.commands.scope.command import ScopeUsage
    from harness.commands.scope.command import cmd_scope as scope

    try:
        return scope(args, argv)
    except ScopeUsage as exc:
        raise UsageError(str(exc)) from None


def cmd_upstream(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.commands.upstream import cmd_upstream as upstream

    return upstream(args, argv)


def cmd_schema(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.model.case_schema import schema_text

    print(schema_text(), end="")
    return 0


COMMANDS = {"run": cmd_run, "validate": cmd_validate, "backends": cmd_backends, "report": cmd_report,
            "repro": cmd_repro, "selftest": cmd_selftest, "minimize": cmd_minimize, "fuzz": cmd_fuzz,
            "schema": cmd_schema, "extract": cmd_extract, "upstream": cmd_upstream, "scope": cmd_scope}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        ownership.check()
        return COMMANDS[args.command](args, argv)
    except InputError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (UsageError, UnknownBackend, ownership.OwnershipError) as exc:
        print(f"convdiff: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("convdiff: interrupted; results so far are in results.jsonl", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
