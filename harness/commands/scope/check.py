"""`convdiff scope --check ID | --check-all`: is a known issue's selector too broad, or too narrow?

For each entry, on the installed targets it names (CPU), fresh cases are drawn inside its selector (the
corpus cases it selects, random draws with the values it names, their neighbours) and just outside it
(neighbours of those that leave it), at most --per-entry of each; all of them run in one go, judged with
every known issue (first match wins, as always). Then, on every result of the targets whose host facts the
entry's `host:` accepts (an entry for another CPU does not apply here), the cases drawn for the other
entries of those targets included, each inside or outside the selector as it matches it (route and host
facts as the result has them):

- too broad: a case it selects passes (and `pass` is not among its statuses: the "fixed upstream?" hint
  it would give), or fails with a status it does not list; unless an entry before it claims the result (the
  first match answers for a result, so that one's selector is the one to look at);
- too narrow: a case it does not select fails the same way (a status it lists, the same diagnosis or the
  same message, digits aside) and no entry explains it;
- the corrected predicate: the simplest rule (harness/judge/rules.py) over these results that selects the
  entry's failures, inside and out, and no pass.
- not shown: neither, and no fresh case inside failed: an entry that lists `pass` (a data-dependent or
  kernel-dependent defect) is not contradicted, and not confirmed either. "holds" needs a failure inside.
  The counts say which: inside, every pass is counted, those the entry accepts too.

`scoped(entry_id)` is the same check of one entry as a function, for a caller that wants the tested rule
(`convdiff upstream`'s "fails exactly when" sentence).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import re
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backends.base import first_line
from backends.registry import TEST_PREFIXES, get_backend, installed_backends, parse_backends
from harness.commands.fuzz.gen import Config
from harness.commands.scope.runs import Runs, ScopeUsage, key
from harness.commands.scope.sample import Pool, fields_of, unique
from harness.execution.host import cpu_facts, merged
from harness.execution.records import FAILING, Record
from harness.judge.known_issues import INVALID_OUTCOMES, KnownIssue, KnownIssues, layered
from harness.judge.rules import Fit, Rule, learn
from harness.model.case import OUTPUTS, Case
from harness.model.features import FeatureTable
from harness.model.loader import load_cases

VALUE_FIELDS = ("op", "dtype", "layout", "padding", "bias", "batch", "groups", "expect")


@dataclass
class EntryCheck:
    id: str
    targets: list[str] = field(default_factory=list)
    applies: str = ""  # "" when it applies here, else why not
    not_run: str = ""  # none of its targets started here (why): neither applicable nor checked
    inside: list[Record] = field(default_factory=list)
    outside: list[Record] = field(default_factory=list)
    broad: list[Record] = field(default_factory=list)  # passes inside
    wrong_status: list[Record] = field(default_factory=list)  # failures inside with a status it does not list
    narrow: list[Record] = field(default_factory=list)  # the same failure outside, unexplained
    fails_inside: int = 0
    passes_inside: int = 0  # every pass inside, those an entry listing `pass` accepts too
    passes_outside: int = 0
    corrected: Fit | None = None

    @property
    def verdict(self) -> str:
        if self.not_run:
            return "not run"
        if self.applies:
            return "not applicable"
        if not self.inside:
            return "no case inside"
        broad = bool(self.broad or self.wrong_status)
        if not broad and not self.narrow and not self.fails_inside:
            return "not shown"  # nothing contradicts it, but no fresh case inside failed either (the module doc)
        return {(False, False): "holds", (True, False): "too broad", (False, True): "too narrow",
                (True, True): "too broad and too narrow"}[(broad, bool(self.narrow))]

    def sentence(self) -> str:
        """"fails exactly when ..." with the fresh cases' counts (for an upstream report)."""
        fit = self.corrected
        words = fit.rule.words if fit else "the entry's selector holds"
        return (f"fails exactly when {words} (on {len(self.inside) + len(self.outside)} fresh cases: "
                f"{self.fails_inside} of {len(self.inside)} inside failed, {self.passes_outside} of "
                f"{len(self.outside)} just outside passed)")

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "verdict": self.verdict, "targets": self.targets, "applies": self.applies or "yes",
                "not_run": self.not_run,
                "inside": len(self.inside), "fails_inside": self.fails_inside, "passes_inside": self.passes_inside,
                "passes_inside_unlisted": len(self.broad),
                "wrong_status_inside": len(self.wrong_status), "outside": len(self.outside),
                "same_failure_outside": len(self.narrow), "passes_outside": self.passes_outside,
                "broad_cases": [f"{r.case_id}@{r.backend}" for r in self.broad[:8]],
                "wrong_status_cases": [f"{r.case_id}@{r.backend} {r.status}" for r in self.wrong_status[:8]],
                "narrow_cases": [f"{r.case_id}@{r.backend}" for r in self.narrow[:8]],
                "corrected_when": self.corrected.rule.text if self.corrected else None,
                "corrected_words": self.corrected.rule.words if self.corrected else None,
                "corrected_errors": self.corrected.errors if self.corrected else None}


def targets_of(entry: KnownIssue, installed: Sequence[str]) -> list[str]:
    """The CPU targets here an entry names: installed backends its globs match, and the test-only ones
    (mutant:, fault:) it names outright."""
    if entry.device and "cpu" not in entry.device:
        return []
    named = [p for p in entry.backend if p.partition(":")[0] in TEST_PREFIXES and p not in installed
             and not any(ch in p for ch in "*?[")]  # `mutant:*` is a pattern (the mutants run torch), not a target
    return [b for b in [*installed, *named] if any(fnmatch.fnmatchcase(b, p) for p in entry.backend)]


def _output(entry: KnownIssue) -> str:
    """The output an entry's results are judged on: `out` where it selects it, else the first gradient it names
    (`grad_*`: grad_input); a relation record's name (`relation:...`) as it stands."""
    wants = entry.cases.get("output", "out")
    wants = [str(w) for w in (wants if isinstance(wants, list) else [wants])]
    found = [o for o in OUTPUTS if any(fnmatch.fnmatchcase(o, w) for w in wants)]
    if found:
        return found[0]  # OUTPUTS begins with out, then grad_input
    return wants[0]


def _kinds(entry: KnownIssue) -> tuple[str, ...]:
    """The kinds of case to draw for an entry: its `expect`; without one, valid unless every status it lists is one
    an invalid case can give, and both where those are a crash, a timeout or an error, which valid cases give too
    (an abort on any NHWC conv, valid or not)."""
    expect = entry.cases.get("expect")
    if expect in ("valid", "invalid"):
        return (expect,)
    statuses = set(entry.status) - {"pass"}
    if not statuses <= INVALID_OUTCOMES:
        return ("valid",)
    return ("invalid",) if "accepted_invalid" in statuses else ("valid", "invalid")


def sample(entry: KnownIssue, target: str, corpus: Sequence[Case], pool: Pool, n: int) -> tuple[list, list]:
    """(inside, just outside): at most n cases or configurations each (the module doc)."""
    kinds = _kinds(entry)
    if len(kinds) > 1:  # half of each, each kind from its own corpus cases
        parts = [sample_kind(entry, target, [c for c in corpus if c.expect == k], pool, max(1, n // len(kinds)), k)
                 for k in kinds]
        return [c for p in parts for c in p[0]][:n], unique([c for p in parts for c in p[1]])[:n]
    return sample_kind(entry, target, corpus, pool, n, kinds[0])


def sample_kind(entry: KnownIssue, target: str, corpus: Sequence[Case], pool: Pool, n: int,
                kind: str) -> tuple[list, list]:
    """`sample` for one kind of case (valid or invalid)."""
    output = _output(entry)
    grads = output != "out"

    def selects(c: Case) -> bool:
        case = dataclasses.replace(c, gradients=True) if grads else c
        return entry.matches(case, target, "cpu", None, output)

    seeds = [c for c in corpus if selects(c)]
    seeds = seeds[:: max(1, len(seeds) // (n // 2 or 1))][: n // 2]
    want = {k: v for k, v in entry.cases.items() if k in VALUE_FIELDS}

    def keep(cfg: Config) -> bool:
        return selects(cfg.case)

    inside: list[Any] = list(seeds)
    inside += pool.around([fields_of(c) for c in seeds], (n - len(inside)) // 2, kind, keep=keep)
    inside += pool.random(n - len(inside), kind, want, keep=keep, tries=30 * n)
    inside += pool.around([fields_of(_case(c)) for c in inside], n - len(inside), kind, keep=keep)
    outside = pool.around([fields_of(_case(c)) for c in inside], n, kind, keep=lambda cfg: not selects(cfg.case))
    if grads:
        inside = [_with_gradients(c) for c in inside]
        outside = [_with_gradients(c) for c in outside]
    return inside[:n], unique(outside)[:n]


def _case(c: Case | Config) -> Case:
    return c.case if isinstance(c, Config) else c


def _with_gradients(c: Case | Config) -> Case | Config:
    if isinstance(c, Config):
        return dataclasses.replace(c, case=dataclasses.replace(c.case, gradients=True))
    return dataclasses.replace(c, gradients=True)


_DIGITS = re.compile(r"\d+")


def _shape(rec: Record) -> tuple:
    """What kind of failure a result is, sizes aside: status, diagnosis, the message's words (a mismatch: how
    large, non-finite, near the bound or gross, in the message's place)."""
    if rec.status == "mismatch":
        size = "non-finite" if rec.nonfinite else "near" if (rec.bound_ratio or 0) <= 16 else "gross"
        return (rec.status, rec.diagnosis, size)
    return (rec.status, rec.diagnosis, _DIGITS.sub("#", rec.message or "")[:60])


def judge_entry(entry: KnownIssue, check: EntryCheck, records: Sequence[Record], cases: dict[str, Case],
                host: dict[str, dict[str, Any]], near: set[str], failed: dict[str, str] | None = None) -> None:
    """Fill `check` from every result on the entry's targets (the module doc): its own cases', and those drawn
    for the other entries of the same targets, each inside or outside its selector as it matches them. Only
    the cases drawn just outside it (`near`: `file::id`) can show it too narrow: a failure far from it is
    another entry's, or a new one. A target that did not start (`failed`: target -> why) has no live host
    facts: where none of the entry's started, it is "not run", never "not applicable"."""
    output = _output(entry)
    started = [t for t in check.targets if f"{t}-cpu" in host]
    if not started:
        why = "; ".join(f"{t}: {first_line((failed or {}).get(f'{t}-cpu', 'did not start'))[:120]}"
                        for t in check.targets)
        check.not_run = f"no target of it started here ({why})"
        return
    applicable = [t for t in started if entry.host_matches(merged(cpu_facts(), host.get(f"{t}-cpu")))]
    if not applicable:
        check.applies = check.applies or "its host selector does not match this host's facts"
        return
    for r in records:
        if r.backend not in applicable or r.output != output or r.status == "unsupported":
            continue
        case = cases[f"{r.file}::{r.case_id}"]
        facts = merged(cpu_facts(), host.get(f"{r.backend}-cpu"))
        inside = entry.matches(case, r.backend, r.device, facts, output, r.params, r.path)
        (check.inside if inside else check.outside).append(r)
    failures = {_shape(r) for r in check.inside if r.status in entry.status and r.status in FAILING}
    for r in check.inside:
        mine = r.known_issue in (None, entry.id)  # an earlier entry that claims it answers for it (first match wins)
        if r.status in ("pass", "within_bound"):
            check.passes_inside += 1
            if "pass" not in entry.status and mine:
                check.broad.append(r)
        elif r.status in entry.status:
            check.fails_inside += 1
        elif mine:
            check.wrong_status.append(r)
    for r in check.outside:
        if r.status in ("pass", "within_bound"):
            check.passes_outside += 1
        elif (r.unexpected and r.status in entry.status and f"{r.file}::{r.case_id}" in near
              and _similar(_shape(r), failures)):
            check.narrow.append(r)
    if check.broad or check.wrong_status or check.narrow:
        check.corrected = correct(entry, check)


def _similar(shape: tuple, failures: set[tuple]) -> bool:
    status, diagnosis, message = shape
    return any(s == status and d == diagnosis and m[:30] == message[:30] for s, d, m in failures)


def correct(entry: KnownIssue, check: EntryCheck) -> Fit | None:
    """The simplest rule that selects the entry's failures (inside and the same ones outside) and no pass."""
    rows = [r for r in check.inside + check.outside if r.status in ("pass", "within_bound")
            or r in check.narrow or (r.status in entry.status and r in check.inside)]
    if not rows:
        return None
    table = FeatureTable.build([r.params for r in rows])
    positive = np.array([r.status not in ("pass", "within_bound") for r in rows])
    fits = learn(table, positive, ~positive)
    return fits[0] if fits and fits[0].rule.terms else Fit(Rule(()), 0, int(positive.sum()), 0, int((~positive).sum()))


def check_entries(entries: Sequence[KnownIssue], known: KnownIssues, per_entry: int, seed: int, out: Path,
                  timeout: float, argv: list[str], log: Any = print, extra: Sequence[str] = ()) -> list[EntryCheck]:
    """Sample, run and judge the entries (the module doc); the run's outputs go to `out`. `extra`: backends
    named on the command line (a plugin's module:Class) that count as installed."""
    installed = list(dict.fromkeys([*installed_backends(), *extra]))
    corpus = load_cases([str(Path(__file__).resolve().parents[3] / "cases")])
    checks: list[EntryCheck] = []
    plans: list[tuple[EntryCheck, KnownIssue, set[str], list]] = []
    for e in entries:
        c = EntryCheck(e.id, targets_of(e, installed))
        checks.append(c)
        if not c.targets:
            c.applies = "names no installed CPU target"
            continue
        if _output(e).startswith("relation:"):
            c.applies = "selects relation records (run's --relations); --check judges forward and gradient outputs"
            continue
        inside, outside = sample(e, c.targets[0], corpus, Pool(seed, tag=f"{zlib.crc32(e.id.encode()):08x}_"), per_entry)
        ids = {key(_case(x)) for x in inside}
        plans.append((c, e, ids, inside + outside))
        log(f"{e.id}: {len(inside)} inside, {len(outside)} just outside, on {', '.join(c.targets)}")
    wanted: dict[str, set[str]] = {}
    batch: list[Any] = []
    for c, _, _, items in plans:
        batch += items
        for x in items:
            wanted.setdefault(key(_case(x)), set()).update(c.targets)
    targets = sorted({t for c, *_ in plans for t in c.targets})
    runs = Runs([(t, "cpu") for t in targets], known, out, timeout)
    try:
        runs.run(batch, select=lambda b, case: b in wanted.get(key(case), ()))
    finally:
        runs.stop()
    for c, e, ids, items in plans:
        judge_entry(e, c, runs.records, runs.cases, runs.info.host_facts, {key(_case(x)) for x in items} - ids,
                    {**runs.info.broken, **runs.info.skipped})
    write_check(out, checks)
    try:
        runs.write_outputs(argv)
    except Exception as exc:  # noqa: BLE001 - the verdicts are written; a report writer's failure must not lose them
        log(f"the run's report could not be written ({type(exc).__name__}: {exc}); results.jsonl and check.md are")
    return checks


def scoped(entry_id: str, known_files: Sequence[str] = (), per_entry: int = 16, seed: int = 0,
           out: str | Path = "reports/scope-check", timeout: float = 60.0) -> EntryCheck:
    """One known issue's selector tested on fresh cases: its verdict, counts and corrected rule; `.sentence()`
    says "fails exactly when ..." with the counts (for `convdiff upstream`)."""
    known = layered(list(known_files), [], [])
    entry = next((e for e in known.entries if e.id == entry_id), None)
    if entry is None:
        raise KeyError(entry_id)
    return check_entries([entry], known, per_entry, seed, Path(out), timeout, ["scope", "--check", entry_id],
                         log=lambda m: None)[0]


def run_checks(args: argparse.Namespace, argv: list[str]) -> int:

    names = parse_backends(args.backends) if args.backends else []
    # the known issues the adapters ship (Backend.known_issues_file): the named backends', else every installed one's
    shipped = [get_backend(n).known_issues_path() for n in (names or installed_backends())]
    known = layered(args.known_issues, [], shipped)
    entries = known.entries
    if args.check:
        missing = [i for i in args.check if not any(e.id == i for e in entries)]
        if missing:
            raise ScopeUsage(f"no known issue {', '.join(missing)}")
        entries = [e for e in entries if e.id in args.check]
    if names:
        entries = [e for e in entries if any(fnmatch.fnmatchcase(n, p) for n in names for p in e.backend)]
    out = Path(args.out)
    start = time.monotonic()
    print(f"convdiff scope --check: {len(entries)} entries, up to {args.per_entry} fresh cases inside and as many "
          f"just outside each -> {out}/", file=sys.stderr)
    checks = check_entries(entries, known, args.per_entry, args.seed, out, args.timeout, argv,
                           log=lambda m: print(m, file=sys.stderr, flush=True), extra=names)
    write_check(out, checks, time.monotonic() - start)  # again, with the time
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
        if c.not_run:
            print(f"{c.id}: not run: {c.not_run}")
        elif c.verdict not in ("holds", "not applicable", "not shown"):
            fix = f"; corrected: when: {c.corrected.rule.text}" if c.corrected and c.corrected.rule.terms else ""
            print(f"{c.id}: {c.verdict} (inside {c.fails_inside} fail, {len(c.broad)} pass, {len(c.wrong_status)} "
                  f"other; outside {len(c.narrow)} same failure, {c.passes_outside} pass){fix}")
    print(", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + f"; wrote {out / 'check.md'}")
    return 0 if all(c.verdict in ("holds", "not shown") for c in checks if c.verdict != "not applicable") else 1


def write_check(out: Path, checks: Sequence[EntryCheck], seconds: float | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "check.json").write_text(json.dumps([c.as_dict() for c in checks], indent=2) + "\n", encoding="utf-8")
    lines = ["# Known issues' selectors, checked on fresh cases", "",
             f"{len(checks)} entries{f' in {seconds:.0f} s' if seconds is not None else ''}. Inside: cases the selector "
             "takes; outside: those it does not (neighbours of the inside ones, and the cases of the entries beside it).", "",
             "| entry | verdict | targets | inside: fail / pass / other | outside: same failure / pass | corrected when |",
             "| --- | --- | --- | --- | --- | --- |"]
    for c in checks:
        d = c.as_dict()
        fix = f"`{d['corrected_when']}`" if d["corrected_when"] else ""
        lines.append(f"| {c.id} | {c.verdict}{' (' + (c.not_run or c.applies) + ')' if c.not_run or c.applies else ''} | {', '.join(c.targets)} | "
                     f"{d['fails_inside']} / {d['passes_inside']} / {d['wrong_status_inside']} | "
                     f"{d['same_failure_outside']} / {d['passes_outside']} | {fix} |")
    (out / "check.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
