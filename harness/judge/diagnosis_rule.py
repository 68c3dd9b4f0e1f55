"""The diagnosis where no bug class fits: the rule the failures follow, not null and not a name that fits
a few of them by coincidence.

harness/judge/diagnosis.py names a class when one reproduces a result exactly. An unknown bug leaves most
of its results unnamed, and a few named by a class that happens to give the same numbers on them (a pad
one larger is also "padding_off_by_one"). At the end of a run, `generalise` looks at each cluster of
wrong values (mismatch or shape_mismatch of one target, op, output and known issue):

- its unnamed results get `rule: <what they have in common>` (harness/judge/common.py), when they are
  MIN_GROUP or more and something separates them from the target's passes;
- where the named ones are fewer than the unnamed and one rule covers the whole cluster as well as the
  unnamed ones' own (no more passes let in), the names were coincidence: every result of the cluster
  gets that rule.

It changes the records in memory, for the summary, the report and JUnit; results.jsonl, written as the
run goes, keeps each result's own diagnosis (a class, or null). A `rule: ...` diagnosis read back from a
summary's records is recomputed, never taken as a class.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from harness.execution.records import Record
from harness.judge.common import MIN_GROUP, common_of, passes_by_target

RULE_PREFIX = "rule: "
WRONG_VALUES = ("mismatch", "shape_mismatch")


def generalise(records: Sequence[Record]) -> None:
    """Give unnamed wrong values their cluster's rule as diagnosis (the module doc); in place."""
    clusters: dict[tuple, list[Record]] = defaultdict(list)
    for r in records:
        if r.diagnosis and r.diagnosis.startswith(RULE_PREFIX):
            r.diagnosis = None
        if r.status in WRONG_VALUES:
            clusters[(r.backend, r.device, r.op, r.status, r.known_issue, r.output)].append(r)
    passes = passes_by_target(records)
    for (b, d, op, _, _, out), members in clusters.items():
        unnamed = [r for r in members if not r.diagnosis]
        if len(unnamed) < MIN_GROUP:
            continue
        ok = passes.get((b, d, op, out), [])
        own = common_of(unnamed, ok)
        if own is None:
            continue
        chosen, targets = own, unnamed
        if len(unnamed) < len(members) < 2 * len(unnamed):
            whole = common_of(members, ok)
            if whole is not None and whole.fit.fn == 0 and whole.fit.fp <= own.fit.fp:
                chosen, targets = whole, members
        for r in targets:
            if chosen.fit.rule.selects(r.params):  # the few it leaves out keep no diagnosis
                r.diagnosis = RULE_PREFIX + chosen.fit.rule.words
