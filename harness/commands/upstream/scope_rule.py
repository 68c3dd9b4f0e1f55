"""A report's "fails exactly when" sentence: the rule `convdiff scope` infers and tests on fresh cases.

`convdiff upstream ID --scope SECONDS` runs scope's inference (harness/commands/scope/infer.py) on the root's
primary entry's first installed CPU target: it starts from the cases just inside and outside the entry's
selector (harness/commands/scope/check.py `sample`), groups the results (those the entry explains are one
group), learns the simplest rule separating that group from every other result, and tests it on fresh
cases round after round until it holds or the time is up. Last, it runs the corpus cases on which the rule and
the entry's selector disagree (at most DISPUTED): the generator's draws can miss a field the rule cannot see
(on 2026-11-29 a rule "a transposed conv" held on 66 fresh quantized cases, all of them per-channel, for
an entry on per-channel transposed convs; the corpus's per-tensor transposed cases pass), and these count
with the fresh cases. The outcome is kept in `<folder>/scope/<root>.json`
(the rule, its words, the fresh cases' counts since the rule last changed: fails inside, passes inside,
fails outside, passes outside; whether it was confirmed; target, seed, seconds and date), so that a later
`convdiff upstream ID` renders it without running it again.

Only a confirmed rule is said in a report. A root with no stored scope, or with one the budget ended before
confirming, says nothing about where the defect shows: no untested guess.
"""

from __future__ import annotations

import datetime
import json
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.commands.upstream.contract import entry_backends, installed
from harness.commands.upstream.subjects import Root, UpstreamUsage
from harness.judge.known_issues import KnownIssue, KnownIssues
from harness.judge.rules import Rule
from harness.model.case import Case

SCOPES = "scope"  # <folder>/scope/<root>.json
PER_SIDE = 16  # cases drawn inside the entry's selector to start from, and as many just outside
DISPUTED = 60  # corpus cases where the rule and the entry's selector disagree, run before a rule is kept
DISPUTED_ELEMENTS = 20_000  # of input and weight at most: the model layers (2048 channels) take minutes to judge


@dataclass(frozen=True)
class TestedRule:
    """A scope inferred for one entry and tested on fresh cases (the counts are since the rule last changed)."""

    entry: str
    target: str
    when: str  # the rule as a known-issue `when` expression
    words: str
    fails_inside: int
    passes_inside: int
    fails_outside: int
    passes_outside: int
    confirmed: bool
    seed: int = 0
    seconds: float = 0.0
    date: str = ""

    def sentence(self) -> str:
        """'It fails exactly when ...' with its counts; '' for a rule not confirmed (nothing is said then)."""
        if not self.confirmed:
            return ""
        inside, outside = self.fails_inside + self.passes_inside, self.fails_outside + self.passes_outside
        return (f"It fails exactly when {self.words}: of fresh cases, {self.fails_inside} of {inside} inside that "
                f"rule failed, and {self.passes_outside} of {outside} just outside it passed ({self.target}, "
                f"tested {self.date}).")


def path_of(root: Root) -> Path | None:
    return root.folder / SCOPES / f"{root.id}.json" if root.folder is not None else None


def stored(root: Root) -> TestedRule | None:
    """The root's stored scope, if any (a file that does not read as one: none)."""
    path = path_of(root)
    if path is None or not path.is_file():
        return None
    try:
        return TestedRule(**json.loads(path.read_text(encoding="utf-8")))
    except (TypeError, ValueError):
        return None


def store(root: Root, rule: TestedRule) -> Path:
    path = path_of(root)
    if path is None:
        raise UpstreamUsage(f"'{root.id}' has no upstream folder to keep its scope in")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(rule), indent=1) + "\n", encoding="utf-8")
    return path


def disputed(entry: KnownIssue, target: str, rule: Rule, corpus: Sequence[Case], n: int = DISPUTED) -> list[Case]:
    """The n smallest corpus cases on which the rule and the entry's selector disagree (forward outputs), of at
    most DISPUTED_ELEMENTS input and weight elements."""
    from harness.commands.upstream.witness import size

    small = [c for c in corpus if size(c)[0] <= DISPUTED_ELEMENTS]
    out = [c for c in small if rule.selects(c.params()) != entry.matches(c, target, "cpu", None, "out", c.params())]
    return sorted(out, key=size)[:n]


def infer(entry: KnownIssue, known: KnownIssues, seconds: float, seed: int = 0, timeout: float = 60.0,
          log: Callable[[str], None] = lambda m: None) -> TestedRule | None:
    """Scope's inference for the entry's group on its first installed CPU target (the module doc); None where
    no result of that target fell to the entry (it does not apply on this host, or no case showed it)."""
    from harness.commands.scope.check import sample
    from harness.commands.scope.infer import Inference
    from harness.commands.scope.runs import Runs
    from harness.commands.scope.sample import Pool
    from harness.model.loader import load_cases

    target = next((b for b in entry_backends(entry) if installed(b)), None)
    if target is None or (entry.device and "cpu" not in entry.device):
        raise UpstreamUsage(f"'{entry.id}' names no installed CPU target to infer its scope on")
    corpus = load_cases([str(Path(__file__).resolve().parents[3] / "cases")])
    pool = Pool(seed, tag=f"{zlib.crc32(entry.id.encode()):08x}_")
    inside, outside = sample(entry, target, corpus, pool, PER_SIDE)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="upstream-scope-") as tmp:
        runs = Runs([(target, "cpu")], known, Path(tmp), timeout)
        try:
            if not runs.ready:
                return None
            inference = Inference(runs, seed, start + seconds, log=log)
            inference.pool = pool  # fresh cases keep the ids the sample started (no clash with its cases)
            inference.start([*inside, *outside], start)  # type: ignore[list-item]  # configurations run as cases
            groups = inference.infer()
            group = groups.get(f"known:{entry.id}")
            if group is None or group.rule is None or not group.rule.terms:
                return None
            # the corpus cases where the rule and the entry's selector disagree: the fresh draws can miss a field the
            # rule cannot see (a per-channel quantized weight), the corpus holds such pairs
            inference.tally(group, runs.run(disputed(entry, target, group.rule, corpus)))
        finally:
            runs.stop()
    c = group.fresh
    return TestedRule(entry.id, target, group.rule.text, group.rule.words, c.fails_inside, c.passes_inside,
                      c.fails_outside, c.passes_outside, group.confirmed, seed, round(time.monotonic() - start, 1),
                      datetime.date.today().isoformat())
