"""Scope inference: when does each group of a target's failures show, tested on fresh cases.

    cases (given, or drawn for a share of the budget)  --run-->  results
    group the non-pass results: by known issue where one explains them, else by status and diagnosis
    per group: the simplest rule separating its cases from the rest (harness/judge/rules.py), and the rules
        that tie with it
    round after round, while the budget lasts and a rule is not yet confirmed:
        fresh cases inside the rule, just outside it (neighbours of its failures that fall outside), and
        where the tied rules disagree --run--> results; count them against the rule; learn again on all
    a rule is confirmed when, since it last changed, at least MIN_INSIDE fresh cases inside and MIN_OUTSIDE
    outside were run and every one agreed: the group's failure inside, no such failure outside

Two groups of failures no known issue explains become one where one rule describes both as well as
their own rules do, and no more verbosely: one bug shows as a wrong shape on some cases and a refusal on
others, or is diagnosed on the cases without an epilogue only (the diagnoses do not all apply to every
case), and is one scope, with the statuses of both.

The counts a scope reports are those fresh cases (fails inside, passes inside, fails outside, passes
outside) since the rule's last change: cases it was not learned from when they were drawn.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.commands.fuzz.gen import Config
from harness.commands.scope.runs import Runs
from harness.commands.scope.sample import Pool, fields_of, unique
from harness.execution.records import Record
from harness.judge.known_issues import INVALID_OUTCOMES
from harness.judge.rules import Fit, Rule, learn
from harness.model.case import Case
from harness.model.features import FeatureTable

MIN_INSIDE = 12
MIN_OUTSIDE = 12
PER_ROUND_INSIDE = 16
PER_ROUND_OUTSIDE = 16
PER_ROUND_DISAGREE = 8
POOL_RANDOM = 600  # random draws per round, to find fresh cases inside and outside every rule
EXPLORE_SHARE = 0.4  # of the budget, when no cases are given: drawing cases to find failures
NEAR_BOUND = 16.0  # an undiagnosed mismatch at most this many times the bound: rounding trouble, not semantics


def group_key(rec: Record) -> str | None:
    """The group of a result: None for a pass; "" for what says nothing (unsupported, within_bound, a result
    of another output); else `known:<id>` or `<status>:<diagnosis>`, an undiagnosed mismatch split by its
    size (non-finite, near the bound, gross): rounding trouble and a semantic bug are different failures."""
    if rec.output != "out":
        return ""
    if rec.status == "pass":
        return None
    if rec.status in ("unsupported", "within_bound"):
        return ""
    if rec.known_issue and rec.status in rec.known_status:
        return f"known:{rec.known_issue}"
    if rec.status == "mismatch" and not rec.diagnosis:  # undiagnosed wrong values: by their size
        return "mismatch:non-finite" if rec.nonfinite else (
            "mismatch:near-bound" if (rec.bound_ratio or 0) <= NEAR_BOUND else "mismatch:-")
    return f"{rec.status}:{rec.diagnosis or '-'}"


@dataclass
class Counts:
    """Fresh cases against a rule: the group's failures and the passes, inside and outside it."""

    fails_inside: int = 0
    passes_inside: int = 0
    fails_outside: int = 0
    passes_outside: int = 0
    other: int = 0  # other groups' failures (inside or out)

    @property
    def agree(self) -> bool:
        return not self.passes_inside and not self.fails_outside

    @property
    def inside(self) -> int:
        return self.fails_inside + self.passes_inside

    @property
    def outside(self) -> int:
        return self.fails_outside + self.passes_outside


@dataclass
class Group:
    key: str  # the first of its keys: its name
    keys: set[str] = field(default_factory=set)  # the result groups (group_key) it holds
    fit: Fit | None = None
    alternatives: list[Fit] = field(default_factory=list)
    fresh: Counts = field(default_factory=Counts)  # since the rule last changed
    changes: int = 0
    statuses: Counter = field(default_factory=Counter)

    @property
    def rule(self) -> Rule | None:
        return self.fit.rule if self.fit else None

    @property
    def confirmed(self) -> bool:
        return (self.fit is not None and bool(self.fit.rule.terms) and self.fresh.agree
                and self.fresh.fails_inside >= MIN_INSIDE and self.fresh.outside >= MIN_OUTSIDE)


class Data:
    """Every result so far (forward outputs), with its case's fields and feature row."""

    def __init__(self) -> None:
        self.params: list[dict[str, Any]] = []
        self.fields: list[dict[str, Any]] = []
        self.keys: list[str | None] = []
        self.invalid: list[bool] = []  # an `expect: invalid` case's result
        self.table: FeatureTable | None = None

    def add(self, records: Sequence[Record], cases: dict[str, Case]) -> None:
        new = []
        for r in records:
            key = group_key(r)
            if key == "":
                continue
            self.params.append(r.params)
            self.fields.append(fields_of(cases[f"{r.file}::{r.case_id}"]))
            self.keys.append(key)
            self.invalid.append(r.params.get("expect") == "invalid")
            new.append(r.params)
        if new:
            part = FeatureTable.build(new)
            self.table = part if self.table is None else self.table.concat(part)

    def mask(self, keys: set[str]) -> np.ndarray:
        return np.array([k in keys for k in self.keys], dtype=bool)


class Inference:
    """One `convdiff scope` inference (the module doc) on one target."""

    def __init__(self, runs: Runs, seed: int, deadline: float, log: Any = None) -> None:
        self.runs, self.pool, self.deadline = runs, Pool(seed), deadline
        self.data = Data()
        self.groups: dict[str, Group] = {}
        self.rounds = 0
        self.log = log or (lambda msg: None)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def feed(self, records: Sequence[Record]) -> None:
        self.data.add(records, self.runs.cases)
        for r in records:
            key = group_key(r)
            if not key:
                continue
            g = next((g for g in self.groups.values() if key in g.keys), None)
            if g is None:
                g = self.groups[key] = Group(key, {key})
            g.statuses[r.status] += 1

    def start(self, cases: Sequence[Case], explore_until: float) -> None:
        """The given cases, or (none given) random draws and the neighbours of their failures until
        `explore_until`."""
        if cases:
            self.feed(self.runs.run(list(cases)))
            return
        while time.monotonic() < explore_until:
            fails = [f for f, k in zip(self.data.fields, self.data.keys) if k]
            batch = self.pool.random(40) + self.pool.around(fails[-40:], 20)
            self.feed(self.runs.run(batch))
            self.log(f"explore: {len(self.data.keys)} results, {len(self.groups)} group(s)")

    def _learn(self, keys: set[str]) -> list[Fit]:
        """The rules for the failures of `keys` against every other result; an invalid case's result counts
        only where the group can happen to one (a known issue predicting a refusal never matches an invalid
        case, whose refusal is a pass: harness/judge/known_issues.py)."""
        assert self.data.table is not None
        pos = self.data.mask(keys)
        neg = ~pos if self.can_be_invalid(keys) else ~pos & ~np.array(self.data.invalid, dtype=bool)
        return learn(self.data.table, pos, neg, alternatives=3)

    def can_be_invalid(self, keys: set[str]) -> bool:
        return any(k.split(":")[0] in INVALID_OUTCOMES or k.startswith("known:") for k in keys)

    def learn_all(self) -> None:
        if self.data.table is None:
            return
        for g in self.groups.values():
            fits = self._learn(g.keys)
            if not fits:
                continue
            best = fits[0]
            if g.fit is None or best.rule.text != g.fit.rule.text:
                if g.fit is not None:
                    g.changes += 1
                g.fresh = Counts()
            g.fit, g.alternatives = best, fits[1:]
        self.merge()

    def merge(self) -> None:
        """Join two groups no known issue explains where one rule fits both as well, as briefly (module doc)."""
        while True:
            free = sorted((g for g in self.groups.values() if g.fit and not g.key.startswith("known:")),
                          key=lambda g: -(g.fit.tp + g.fit.fn))
            done = True
            for i, a in enumerate(free):
                for b in free[i + 1:]:
                    fits = self._learn(a.keys | b.keys)
                    if fits and fits[0].rule.terms and fits[0].errors <= a.fit.errors + b.fit.errors \
                            and fits[0].rule.size <= max(a.rule.size, b.rule.size) \
                            and fits[0].rule.size < a.rule.size + b.rule.size:  # one rule, not the two side by side
                        a.keys |= b.keys
                        a.statuses.update(b.statuses)
                        a.fit, a.alternatives, a.fresh = fits[0], fits[1:], Counts()
                        a.changes += 1
                        del self.groups[b.key]
                        done = False
                        break
                if not done:
                    break
            if done:
                return

    def round(self) -> bool:
        """One round of fresh cases for the unconfirmed groups; False when there is nothing left to test."""
        todo = [g for g in self.groups.values() if g.fit is not None and g.fit.rule.terms and not g.confirmed]
        if not todo:
            return False
        self.rounds += 1
        pool = self.pool.random(POOL_RANDOM // 2, tries=POOL_RANDOM) + self.pool.random(
            POOL_RANDOM // 8, kind="invalid", tries=POOL_RANDOM // 4)
        chosen: list[Config] = []
        for g in todo:
            rule = g.fit.rule
            mine = [f for f, k in zip(self.data.fields, self.data.keys) if k in g.keys]
            near = self.pool.around(mine[-60:], 80)
            candidates = unique(near + pool)
            inside = [c for c in candidates if rule.selects(c.case.params())]
            outside_near = [c for c in near if not rule.selects(c.case.params())]
            outside = outside_near + [c for c in pool if not rule.selects(c.case.params())][:PER_ROUND_OUTSIDE // 4]
            disagree = [c for c in candidates if any(a.rule.selects(c.case.params()) != rule.selects(c.case.params())
                                                     for a in g.alternatives)]
            chosen += inside[:PER_ROUND_INSIDE] + outside[:PER_ROUND_OUTSIDE] + disagree[:PER_ROUND_DISAGREE]
        chosen = unique(chosen)
        if not chosen:
            return False
        records = self.runs.run(chosen)
        for g in todo:
            self.tally(g, records)
        self.feed(records)
        self.learn_all()
        self.log(f"round {self.rounds}: {len(chosen)} fresh cases; "
                 + "; ".join(f"{g.key}: {'confirmed' if g.confirmed else 'testing'}" for g in self.groups.values()))
        return True

    def tally(self, g: Group, records: Sequence[Record]) -> None:
        rule = g.fit.rule if g.fit else None
        if rule is None:
            return
        invalid_ok = self.can_be_invalid(g.keys)
        for r in records:
            key = group_key(r)
            if key == "" or (not invalid_ok and r.params.get("expect") == "invalid"):
                continue
            inside = rule.selects(r.params)
            if key in g.keys:
                if inside:
                    g.fresh.fails_inside += 1
                else:
                    g.fresh.fails_outside += 1
            elif key is None:
                if inside:
                    g.fresh.passes_inside += 1
                else:
                    g.fresh.passes_outside += 1
            else:
                g.fresh.other += 1

    def infer(self) -> dict[str, Group]:
        self.learn_all()
        while self.left() > 0 and self.round():
            pass
        return self.groups
