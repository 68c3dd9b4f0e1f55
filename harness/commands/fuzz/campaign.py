"""`convdiff fuzz`: generated cases through the usual pipeline, then the new findings written down.

    configs (fuzz_gen, seeded) --stream--> run_cases (warm workers, oracle, judge, known issues)
        --> results.jsonl (streamed), fuzz-cases.yaml (every case run, so `convdiff repro` finds them)
        --> Findings (signatures: known / new, first-seen times)
        --> new signatures minimized, appended to --write with stubs and .md reports (fuzz_write)
        --> summary.json (+ its `fuzz` section), report.html, junit.xml (run_outputs, as `convdiff run`)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from backends.registry import UnknownBackend, get_backend, installed_backends, parse_backends
from harness.commands.fuzz.findings import Findings, NewSignature, format_findings, signature, signature_text
from harness.commands.fuzz.gen import Config, generate
from harness.commands.fuzz.pace import Pace
from harness.commands.fuzz.steer import Steer
from harness.commands.fuzz.write import (
    STUB_SUFFIX,
    append_case,
    append_stub,
    case_entry,
    minimal_summary,
    report_md,
    shrink,
    stub_entry,
)
from harness.commands.run_outputs import write_run_outputs
from harness.execution.records import JsonlSink, Record
from harness.execution.relation_exec import RelationPlan, run_deferred
from harness.execution.runner import Lane, RunInfo, prefetch
from harness.judge.common import Common, common_of, passes_by_target
from harness.judge.known_issues import KnownIssues, layered
from harness.judge.summary import format_table
from harness.judge.verdict import Verdicts
from harness.model.case import Case
from harness.numerics.relations import RelationError, applies, parse_relations

# of the configs: invalid ones (nine classes, harness/commands/fuzz/invalid.py, and the sizes the schema refuses)
INVALID_RATE = 0.3
GRADIENT_SHARE = 0.65  # of the valid configs that judge gradients (gen.config_at): about 30% of the valid ones
# Without --relations: these relations on a seeded share of the cases (subnormals flushed show on any float case,
# float64 computed in float32 on any scaled float64 one; each runs the case again: on a compiled path, a build)
DEFAULT_RELATIONS, RELATION_SHARE = ("subnormal", "scaling"), 0.1
MINIMIZE_SHARE = 0.25  # of a --time budget: the part kept for minimizing new findings
# cases drawn ahead of the slowest target and in flight: while a paced target builds, the eager ones run up to AHEAD
# past it (seed 7, 600 s, 2-core Zen 4, 2026-11-30: 8, 1,771 cases, 34% idle; 16 and pace.py's hang limit, 2,119, 26%)
AHEAD = 16
IN_FLIGHT = 2 * AHEAD  # drawn but not yet judged: the prepared ones waiting (prefetch) and those on the workers
# The draws stop when the cases in flight, at TAIL_MARGIN times the pace of the last draws, and what the busiest
# target still has queued (Pace.backlog; one case of the slowest target's cost let a 600 s fuzz run 618 s) would end
# past --time: on a shared 2-core AMD EPYC Zen 4 (2026-11-29) 12 cases in flight took 68 s where the pace gave 30 s
TAIL_MARGIN = 2.0
TICK_S = 30.0


class FuzzUsage(ValueError):
    """Bad arguments; the CLI turns it into a usage error."""


def add_parser(sub: Any) -> None:
    fz = sub.add_parser("fuzz", help="generate cases from the schema's space, judge them, write down new findings",
                        description="Generate seeded cases biased to the boundaries conv bugs live on, judge them like "
                        f"`convdiff run` (gradients on {round(GRADIENT_SHARE * 100)}% of the valid ones that judge them), steer toward new "
                        "failures, minimize each new "
                        "finding. A target whose cost per case is above twice the reference (the cost of the cheapest third "
                        "of the targets) runs that share of "
                        "the cases (harness/commands/fuzz/pace.py).")
    fz.add_argument("--backends", help="comma-separated backend names, module:Class or name=module:Class "
                    "(default: every installed backend)")
    fz.add_argument("--known-issues", action="append", default=[], metavar="FILE",
                    help="a known-issues file of your own (repeatable), matched before convdiff's own")
    limit = fz.add_mutually_exclusive_group()
    limit.add_argument("--time", type=float, help="seconds for the whole command after the workers start: generating and "
                       "judging, then minimizing new findings in at most a quarter of it (default 60 when --cases is not given)")
    limit.add_argument("--cases", type=int, help="number of generated configs to run")
    fz.add_argument("--seed", type=int, default=0, help="generator seed: the same seed gives the same configs")
    fz.add_argument("--out", default="reports/fuzz", help="output directory (default: reports/fuzz)")
    fz.add_argument("--invalid-rate", type=float, default=INVALID_RATE,
                    help=f"share of invalid configurations (default {INVALID_RATE:g})")
    fz.add_argument("--write", help="also append the minimized findings of real backends to this case file "
                                    "(e.g. cases/found/fuzz-<date>.yaml); by default everything stays under --out")
    fz.add_argument("--timeout", type=float, default=30.0, help="seconds a case may take at most (default 30); once a "
                    "target's cost per case is known, 20 times it, 10 s at least (harness/commands/fuzz/pace.py)")
    fz.add_argument("--relations", metavar="LIST", help="judge these metamorphic relations on every generated "
                    "case (comma-separated, all, or none), as `convdiff run --relations`; by default "
                    f"{', '.join(DEFAULT_RELATIONS)} on each target's first case of each float dtype and on a seeded "
                    f"{round(RELATION_SHARE * 100)}%% of the cases")
    fz.add_argument("--minimize-budget", type=float, default=300.0,
                    help="seconds spent minimizing new signatures in all (default 300)")


class Source:
    """The generated cases, stopped by time or count; schema-invalid configs are checked and counted, not run.
    A share of the draws are neighbours of earlier failures (harness/commands/fuzz/steer.py), fed by `feedback`."""

    def __init__(self, args: argparse.Namespace, cases_file: Path) -> None:
        self.args, self.cases_file = args, cases_file
        self.start = time.monotonic()
        self.seconds = args.time if args.time is not None else (1e12 if args.cases else 60.0)
        self.cases: dict[str, Case] = {}
        self.configs_by_id: dict[str, Config] = {}
        self.kinds: Counter = Counter()
        self.configs = generate(args.seed, args.invalid_rate, GRADIENT_SHARE, file=cases_file.name)
        self.steer = Steer(args.seed)
        self.backlog: Callable[[], float] = lambda: 0.0  # what the busiest target still has to run (pace.py)

    def feedback(self, rec: Record) -> None:
        """A result came back: a failure makes its configuration an anchor for later neighbours."""
        cfg = self.configs_by_id.get(rec.case_id)
        if cfg is None or rec.status in ("pass", "unsupported"):
            return
        known = rec.known_issue if rec.known_issue and rec.status in rec.known_status else None
        self.steer.feedback(cfg, known or signature_text(signature(rec)), rec.backend)

    def draws(self) -> Iterator[Config]:
        """The base stream of the seed, with the steered neighbours put in between."""
        for cfg in self.configs:
            while self.steer.wants():
                near = self.steer.next(self.cases_file.name)
                if near is None:
                    break
                yield near
            yield cfg

    def __iter__(self) -> Iterator[Case]:
        # The clock starts at the first draw, once the workers are up: start-up is not fuzzing time.
        self.start = time.monotonic()
        deadline = self.start + self.seconds
        drawn: deque[float] = deque(maxlen=2 * IN_FLIGHT)  # when the last draws were made
        with open(self.cases_file, "w", encoding="utf-8") as fh:
            fh.write(f"# convdiff fuzz --seed {self.args.seed}: every generated case that ran\ncases:\n")
            for cfg in self.draws():
                now = time.monotonic()
                # the cases in flight still run on every target chosen for them when the time is up: stop drawing
                # when they would take the run past its deadline, at the pace so far or of the last draws (slower
                # of the two: a machine that got busier), and the cases queued on the busiest target
                recent = (now - drawn[0]) / len(drawn) if len(drawn) == drawn.maxlen else 0.0
                whole = (now - self.start) / len(self.cases) if len(self.cases) >= IN_FLIGHT else 0.0
                tail = TAIL_MARGIN * IN_FLIGHT * max(recent, whole) + self.backlog()
                if now + tail > deadline or (self.args.cases and len(self.cases) >= self.args.cases):
                    return
                drawn.append(now)
                self.kinds[f"{cfg.kind}:{cfg.focus}"] += 1
                if cfg.case is None:
                    continue  # refused by the schema (checked in fuzz_gen), as the loader would
                fh.write(f"  - {json.dumps(cfg.fields)}\n")
                fh.flush()
                self.cases[cfg.case.id] = cfg.case
                self.configs_by_id[cfg.case.id] = cfg
                yield cfg.case


def relation_plan(args: argparse.Namespace) -> RelationPlan | None:
    """--relations on every case; none; or, by default, DEFAULT_RELATIONS on each target's first case of each
    dtype they apply to, and on a seeded RELATION_SHARE of the cases (the same ones on every target that runs
    them, so that their verdicts compare): a slow target that runs a share of the cases (pace.py) is probed too."""
    if args.relations == "none":
        return None
    if args.relations:
        try:
            return RelationPlan(parse_relations(args.relations))
        except RelationError as exc:
            raise FuzzUsage(str(exc)) from None
    seed = args.seed
    firsts: dict[tuple[str, str], str] = {}  # (backend, dtype) -> its first case the relations apply to

    def chosen(backend: str, case: Case) -> bool:
        if any(applies(case, n) for n in DEFAULT_RELATIONS) and firsts.setdefault((backend, case.dtype), case.id) == case.id:
            return True
        return random.Random(f"{seed}:{case.id}:relations").random() < RELATION_SHARE

    return RelationPlan(DEFAULT_RELATIONS, chosen)


def _targets(backends: list[str]) -> list[tuple[str, str]]:
    return [(b, "cpu") for b in backends if "cpu" in get_backend(b).capabilities.devices]


def run_fuzz(args: argparse.Namespace, argv: list[str]) -> int:
    if (args.cases is not None and args.cases < 1) or (args.time is not None and args.time <= 0):
        raise FuzzUsage("--cases and --time must be positive")
    if not 0.0 <= args.invalid_rate <= 1.0:
        raise FuzzUsage("--invalid-rate must be between 0 and 1")
    try:
        backends = parse_backends(args.backends) if args.backends else installed_backends()
    except UnknownBackend as exc:
        raise FuzzUsage(str(exc)) from None
    targets = _targets(backends)
    if not targets:
        raise FuzzUsage("no backend can run on the cpu")
    # Fuzzed configurations rarely come back: TVM's compile cache stores one only on its second sighting.
    # (for this run's workers only: the variable is put back when they have stopped)
    cache_write = os.environ.get("CONVDIFF_CACHE_WRITE")
    os.environ.setdefault("CONVDIFF_CACHE_WRITE", "second")
    known = layered(args.known_issues, [], [get_backend(b).known_issues_path() for b in backends])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sink = JsonlSink(out / "results.jsonl")
    source = Source(args, out / "fuzz-cases.yaml")
    if args.time is not None:  # one budget for the command: generation stops early enough to minimize
        args.minimize_budget = min(args.minimize_budget, MINIMIZE_SHARE * args.time)
        source.seconds = args.time - args.minimize_budget
    records: list[Record] = []
    findings = Findings()
    last = [source.start]
    pace = Pace([b for b, _ in targets], pinned=lambda case_id: source.steer.origin.get(case_id, ()),
                slow=[b for b, _ in targets if get_backend(b).builds_per_case])
    source.backlog = pace.backlog

    def collect(rec: Record) -> None:
        sink(rec)
        records.append(rec)
        source.feedback(rec)
        pace.record(rec)
        now = time.monotonic()
        findings.add(rec, now - source.start)
        if now - last[0] >= TICK_S:
            last[0] = now
            stats = Counter(r.status for r in records)
            print(f"[{now - source.start:5.0f} s] {len(source.cases)} cases, {len(records)} results "
                  f"({' '.join(f'{k}={v}' for k, v in sorted(stats.items()))}); known issues hit "
                  f"{len(findings.known)}, new signatures {len(findings.new)}", file=sys.stderr, flush=True)

    limit = f"{args.cases} configs" if args.cases else f"{source.seconds:g} s of generating and judging"
    print(f"convdiff fuzz: seed {args.seed}, {limit}, then up to {args.minimize_budget:g} s minimizing new findings "
          f"(plus the workers' start-up); {len(targets)} targets -> {out}/", file=sys.stderr)
    relations = relation_plan(args)
    info, lane = RunInfo(), Lane(targets, relations)  # one lane: the 2-core machine is the limit, not the workers
    try:
        lane.start(info)
        for target, reason in info.skipped.items():
            print(f"skipped {target}: {reason}", file=sys.stderr)
        try:
            # a few cases ahead only: the clock stops the draws, and a case drawn runs on every target the pace
            # chose, so cases drawn far ahead of the slowest target (a compiler, a loaded machine) overran --time
            # by minutes; steering also reads results sooner
            lane.run(prefetch(source, max_ahead=AHEAD), lambda b: pace.timeout(b, args.timeout), Verdicts(known), collect,
                     select=pace.select, depth=AHEAD)
            if relations is not None:  # the process relations, once the lane is done (relation_exec.run_deferred)
                run_deferred(lane.deferred, relations.deferred, args.timeout, Verdicts(known), collect)
        finally:
            sink.close()
        run_s = time.monotonic() - source.start
        written = write_findings(args, findings, source.cases, info, lane, known, records)
        write_unlisted(args, findings)
        precision = quiet_rerun(args, findings, source.cases, known)
        precision["timeouts_passed_on_retry"] = sum(w.retries_saved for w in lane.workers)
    finally:
        lane.stop()
        if cache_write is None:
            os.environ.pop("CONVDIFF_CACHE_WRITE", None)
    section = findings.summary([e.id for e in known.entries], written)
    section["precision"] = precision
    section.update({"seed": args.seed, "configs": dict(sorted(source.kinds.items())), "cases_run": len(source.cases),
                    "run_s": round(run_s, 1), "write": args.write or str(found_file(out)), "targets": pace.summary(),
                    "relations": {"names": list(relations.names),
                                  "share": 1.0 if args.relations else RELATION_SHARE, "first_per_dtype": not args.relations}
                    if relations is not None else None})
    summary = write_run_outputs(out, records, info, argv, known, extra={"fuzz": section})
    print(format_table(summary))
    print(f"{len(source.cases)} generated cases in {run_s:.0f} s "
          f"({sum(v for k, v in source.kinds.items() if k.startswith('schema_invalid'))} schema-invalid configs "
          "refused by the loader, not run)")
    paced = {b: v for b, v in section["targets"].items() if v["left_out"]}
    if paced:
        print("slow targets ran a share (cases run of those drawn, seconds per case): " + ", ".join(
            f"{b} {v['cases']}/{v['cases'] + v['left_out']} ({v['s_per_case']:g} s)" for b, v in paced.items()))
    print(format_findings(section))
    p = section["precision"]
    print(f"precision: {p['survived_quiet_rerun']} of {p['new_signatures']} new signature(s) reproduce in a quiet re-run "
          f"on a fresh worker; {p['unlisted_outcomes']} unlisted outcome(s) of known entries and "
          f"{p['timeouts_passed_on_retry']} timeout(s) that passed on their retry were not counted as signatures")
    return 1 if section["new_signatures"] or summary["unexpected"] else 0


def quiet_rerun(args: argparse.Namespace, findings: Findings, cases: dict[str, Case],
                known: KnownIssues) -> dict[str, Any]:
    """Each new signature's first failing case run once more on a fresh worker of its target, after the campaign,
    with nothing else running: a signature survives when the status (and diagnosis) comes back. The fuzz's own
    precision: how many of its new signatures are real."""
    kept, flaky = [], []
    for n in sorted(findings.new.values(), key=lambda n: n.first_s):
        rec = n.first
        case = cases.get(rec.case_id)
        replay: list[Record] = []
        if case is not None:
            # a relation's finding: that relation again (a process relation's shadow workers after the lane)
            plan = RelationPlan((rec.output.removeprefix("relation:"),)) if rec.output.startswith("relation:") else None
            lane, info = Lane([(rec.backend, rec.device)], plan), RunInfo()
            try:
                lane.start(info)
                lane.run([case], args.timeout, Verdicts(known), replay.append)
                if plan is not None and plan.deferred:
                    run_deferred(lane.deferred, plan.deferred, args.timeout, Verdicts(known), replay.append)
            finally:
                lane.stop()
        again = next((r for r in replay if r.output == rec.output), None)
        same = again is not None and again.status == rec.status and again.diagnosis == rec.diagnosis
        (kept if same else flaky).append({"signature": signature_text(n.signature), "case": rec.case_id,
                                          "again": again.status if again else "no result"})
    return {"new_signatures": len(findings.new), "survived_quiet_rerun": len(kept), "did_not_reproduce": flaky,
            "unlisted_outcomes": len(findings.unlisted)}


def write_unlisted(args: argparse.Namespace, findings: Findings) -> None:
    """For each unlisted outcome, a proposal in the stub file: the status to add to the entry that matched."""
    if not findings.unlisted:
        return
    path = Path(args.write) if args.write else found_file(Path(args.out))
    stub = path.with_name(path.name.removesuffix(".yaml") + STUB_SUFFIX)
    lines = []
    for u in sorted(findings.unlisted.values(), key=lambda u: u.first_s):
        lines += [f"  # unlisted outcome of {u.id}: {u.first.backend} gave {u.status} on {u.first.case_id} "
                  f"({u.count} results); the entry lists {', '.join(u.listed)}",
                  f"  # proposal: in {u.id}, status: [{', '.join([*u.listed, u.status])}]  (measure it first)"]
    append_stub(stub, "\n".join(lines) + "\n")


def found_file(out: Path) -> Path:
    """Where minimized findings go when --write is not given: under --out, never the tracked corpus."""
    return out / "found" / f"fuzz-{datetime.datetime.now(datetime.UTC).date().isoformat()}.yaml"


def signature_rule(new: NewSignature, records: list[Record]) -> Common | None:
    """What a new signature's failures have in common against the passes of the same target and op (None for
    fewer than three of them, or nothing that separates them)."""
    r0 = new.first
    members = [r for r in records if r.backend == r0.backend and r.output == r0.output and signature(r) == new.signature]
    return common_of(members, passes_by_target(records).get((r0.backend, r0.device, r0.op, r0.output), []))


def write_findings(args: argparse.Namespace, findings: Findings, cases: dict[str, Case], info: RunInfo,
                   lane: Lane, known: KnownIssues | None = None,
                   records: list[Record] | None = None) -> dict[tuple, dict[str, Any]]:
    """Minimize each new signature's first failure and write case, stub and report; {signature: what was done}.
    `records`: the run's results, whose rule for each signature (its failures against the target's passes of the
    same op: harness/judge/common.py) is the stub's selector."""
    done: dict[tuple, dict[str, Any]] = {}
    new: list[NewSignature] = []
    for n in sorted(findings.new.values(), key=lambda n: n.first_s):
        if n.first.output.startswith("relation:"):  # the minimizer judges a case's outputs, not its relations
            done[n.signature] = {"minimize": "a relation's finding: not minimized (the record names its runs)"}
        else:
            new.append(n)
    if not new:
        return done
    print(f"minimizing {len(new)} new signature(s) (budget {args.minimize_budget:g} s)...", file=sys.stderr)
    firsts = [n.first for n in new]
    workers = {w.backend: w for w in lane.workers}
    shrunk = shrink(firsts, cases, workers, args.minimize_budget, max(20.0, args.minimize_budget / len(new)),
                    args.timeout, known)
    minimal = list({s.minimized.case.id: s.minimized.case for s in shrunk.values() if not isinstance(s, str)}.values())
    # every target's verdict on every minimal case (the reports' "other implementations" table)
    verdicts: dict[str, list[Record]] = {}
    if minimal:
        lane.run(minimal, args.timeout, Verdicts(), lambda r: verdicts.setdefault(r.case_id, []).append(r))
    own = found_file(Path(args.out))
    for n in new:
        key = f"{n.first.case_id}@{n.first.backend}"
        got = shrunk.get(key)
        if got is None or isinstance(got, str):
            done[n.signature] = {"minimize": got or "not minimized"}
            continue
        m, payload = got.minimized, got.payload
        rec = m.record
        comment = [f"{rec.backend}-{rec.device} {rec.backend_version}: {rec.status}"
                   + (f", diagnosis {rec.diagnosis}" if rec.diagnosis else ", no diagnosis")
                   + f"; signature {signature_text(n.signature)}", rec.message or n.first.message]
        entry = case_entry(m, comment)
        # the corpus (--write) takes real backends' findings only: a mutant's or fault's is no divergence
        path = Path(args.write) if args.write and not get_backend(rec.backend).test_only else own
        if append_case(path, entry, m.case.id):
            rule = signature_rule(n, records or [])
            if rule is not None and not rule.fit.rule.selects(m.case.params()):
                rule = None  # a rule that leaves out the minimal case is not the behaviour: the case selects
            append_stub(path.with_name(path.name.removesuffix(".yaml") + STUB_SUFFIX), stub_entry(rec, m.case, rule))
        others = sorted(verdicts.get(m.case.id, []), key=lambda r: r.backend)
        replay = next((r for r in others if r.backend == rec.backend and r.output == rec.output), None)
        md = own.with_name(f"{m.case.id}.md")
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(report_md(rec, m.case, entry, payload, [r for r in others if r.output == rec.output],
                                info.fingerprints.get(f"{rec.backend}-{rec.device}", {}),
                                info.host_facts.get(f"{rec.backend}-{rec.device}", {}), rec.message),
                      encoding="utf-8")
        done[n.signature] = {**minimal_summary(m), "written": str(path), "report": str(md),
                             "replays": replay.status if replay else None}
    return done

