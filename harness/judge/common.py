"""Each finding group's common factor, from the run's own results: what its failures share that the passes
of the same target and op do not ("all 23: dilation > 1 and pad before > 0 on one axis; 0 of 204 passes").

A group is the summary's finding key (target, op, status, diagnosis, known issue, output). Its rule is
harness/judge/rules.py's simplest one separating the group's cases from the passing results of the same
target, op and output; no case is run for it. Groups of fewer than MIN_GROUP results get none (one case
has everything in common with itself), and so do groups whose target has no pass of that op to tell
them from. At most MAX_PASSES passes of a target and op are used (an even, fixed sample: the line then
says "sampled passes").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from harness.execution.records import Record
from harness.judge.rules import Fit, learn
from harness.model.features import FeatureTable

MIN_GROUP = 3
MAX_PASSES = 600
MAX_MEMBERS = 400  # members a rule is learned from (all of them are counted)

Key = tuple


def finding_key(r: Record) -> Key:
    """The summary's finding group of a non-pass result."""
    return (r.backend, r.device, r.op, r.status, r.diagnosis, r.known_issue, r.output)


@dataclass(frozen=True)
class Common:
    """A group's common factor: the rule, its counts over the group and the passes, and how many passes there
    were in all (more than counted when they were sampled)."""

    fit: Fit
    passes_total: int

    @property
    def line(self) -> str:
        f = self.fit
        failures = f.tp + f.fn
        share = f"all {failures}" if f.fn == 0 else f"{f.tp} of {failures}"
        sampled = f.fp + f.tn < self.passes_total
        return f"{share}: {f.rule.words}; {f.fp} of {f.fp + f.tn}{' sampled' if sampled else ''} passes"

    @property
    def when(self) -> str:
        return self.fit.rule.text


def _even(items: Sequence[Record], n: int) -> list[Record]:
    """At most n of the items, evenly spread (the same ones on every call)."""
    if len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def common_of(members: Sequence[Record], passes: Sequence[Record],
              passes_table: FeatureTable | None = None) -> Common | None:
    """The common factor of some failures against some passes (the same target, op and output), or None when
    there are too few of either or nothing separates them. `passes_table`: the features of
    `_even(passes, MAX_PASSES)`, when the caller has them (one table for all the groups of a target)."""
    if len(members) < MIN_GROUP or not passes:
        return None
    ok, some = _even(passes, MAX_PASSES), _even(members, MAX_MEMBERS)
    table = (passes_table or FeatureTable.build([r.params for r in ok])).concat(
        FeatureTable.build([r.params for r in some]))
    positive = np.arange(len(ok) + len(some)) >= len(ok)
    fits = learn(table, positive, ~positive)
    if not fits or not fits[0].rule.terms:
        return None
    fit = fits[0]
    if len(members) > len(some):  # learned on a sample: count every member
        hit = sum(fit.rule.selects(r.params) for r in members)
        fit = Fit(fit.rule, hit, len(members) - hit, fit.fp, fit.tn)
    return Common(fit, len(passes))


def passes_by_target(records: Iterable[Record]) -> dict[tuple, list[Record]]:
    """The passing results by (backend, device, op, output)."""
    out: dict[tuple, list[Record]] = defaultdict(list)
    for r in records:
        if r.status == "pass":
            out[(r.backend, r.device, r.op, r.output)].append(r)
    return out


def common_factors(records: Iterable[Record]) -> dict[Key, Common]:
    """The common factor of every finding group of MIN_GROUP results or more (module doc)."""
    records = list(records)
    passes = passes_by_target(records)
    groups: dict[Key, list[Record]] = defaultdict(list)
    for r in records:
        if r.status not in ("pass", "within_bound", "unsupported"):  # the summary's finding groups
            groups[finding_key(r)].append(r)
    out: dict[Key, Common] = {}
    tables: dict[tuple, FeatureTable] = {}
    for key, members in groups.items():
        where = (key[0], key[1], key[2], key[6])
        if len(members) < MIN_GROUP or not passes.get(where):
            continue
        if where not in tables:
            tables[where] = FeatureTable.build([r.params for r in _even(passes[where], MAX_PASSES)])
        common = common_of(members, passes[where], tables[where])
        if common is not None:
            out[key] = common
    return out
