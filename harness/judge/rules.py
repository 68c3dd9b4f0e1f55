"""The simplest rule that separates a group of failures from the passes: what the failures have in common.

A rule is a disjunction of at most MAX_TERMS conjunctions of at most MAX_ATOMS atoms
(harness/model/features.py): boolean features each written as a `when` expression, so a rule is a
known-issue selector as it stands. `learn` searches it exhaustively: every atom, every pair of atoms, and
the best pairs extended by a third; the counts come from boolean matrix products (positives x atoms),
milliseconds for hundreds of cases and atoms. Where no single conjunction is exact, terms are added by
sequential covering (each term the best on the failures not yet covered). Rules are ranked by errors on
the data (failures left out plus passes let in), then by size, then by the atoms' cost, so among equally
exact rules the shortest, most plainly worded one wins.

Why an exhaustive search over named conjunctions and not a library learner: a decision tree
(scikit-learn's) chooses splits by impurity, not by how short the rule reads, and splits raw numbers
(`dilation <= 1.5`) where conv bugs follow relations between them on one axis ("dilation > 1 and pad
before > 0 on the same axis"); turning its paths back into such relations would be the search itself.
The conjunctions needed are small (three atoms have always sufficed for the database's entries), so the
exhaustive search is cheap, gives the minimal rule by construction, and needs no new dependency. It also
returns the rules that tie with the best (`alternatives`): the cases where they disagree are the ones
`convdiff scope` runs next.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.model.features import Atom, FeatureTable, selector_names
from harness.model.predicate import compile_predicate, evaluate

_compiled = functools.lru_cache(maxsize=256)(compile_predicate)
MAX_ATOMS = 3
MAX_TERMS = 3
BEAM = 40  # pairs extended by a third atom


@dataclass(frozen=True)
class Rule:
    """A disjunction of conjunctions of atoms; no terms selects nothing."""

    terms: tuple[tuple[Atom, ...], ...]

    @property
    def text(self) -> str:
        """The rule as a `when` expression."""
        if not self.terms:
            return "False"
        parts = [" and ".join(f"({a.text})" if " or " in a.text else a.text for a in t) for t in self.terms]
        return parts[0] if len(parts) == 1 else " or ".join(f"({p})" for p in parts)

    @property
    def words(self) -> str:
        if not self.terms:
            return "nothing in common"
        parts = [" and ".join(a.words for a in t) for t in self.terms]
        return parts[0] if len(parts) == 1 else "either " + "; or ".join(parts)

    @property
    def size(self) -> int:
        return sum(len(t) for t in self.terms)

    @property
    def cost(self) -> float:
        return sum(a.cost for t in self.terms for a in t)

    def compiled(self) -> Any:
        return _compiled(self.text)

    def selects(self, params: dict[str, Any]) -> bool:
        """Whether the rule selects a case (a `Case.params()` mapping), as a known issue's `when` would."""
        try:
            return evaluate(self.compiled(), selector_names(params))
        except Exception:  # noqa: BLE001 - as known issues: an expression that fails does not match
            return False


@dataclass(frozen=True)
class Fit:
    """A rule and its counts on the cases it was learned from."""

    rule: Rule
    tp: int  # failures it selects
    fn: int  # failures it leaves out
    fp: int  # passes it selects
    tn: int  # passes it leaves out

    @property
    def errors(self) -> int:
        return self.fn + self.fp

    @property
    def exact(self) -> bool:
        return self.errors == 0


def _key(errors: int, atoms: Sequence[int], costs: np.ndarray) -> tuple:
    return (errors, len(atoms), round(float(sum(costs[a] for a in atoms)), 3), tuple(atoms))


def _conjunctions(P: np.ndarray, N: np.ndarray, costs: np.ndarray, want: int, keep: int) -> list[tuple[tuple, tuple]]:
    """The best conjunctions of up to MAX_ATOMS atoms, as (sort key, atom indices), best first.
    P, N: (atoms, positives) and (atoms, negatives) as float32 0/1; `want`: how many positives there are."""
    tp1, fp1 = P.sum(axis=1), N.sum(axis=1)
    found: list[tuple[tuple, tuple]] = [(_key(int(want - tp1[a] + fp1[a]), (a,), costs), (a,)) for a in range(len(P))]
    if MAX_ATOMS >= 2 and len(P) > 1:
        tp2, fp2 = P @ P.T, N @ N.T
        err2 = (want - tp2) + fp2
        iu = np.triu_indices(len(P), 1)
        order = np.lexsort((costs[iu[0]] + costs[iu[1]], err2[iu]))
        pairs = [(int(iu[0][i]), int(iu[1][i])) for i in order[: max(BEAM, keep)]]
        found += [(_key(int(err2[a, b]), (a, b), costs), (a, b)) for a, b in pairs]
        if MAX_ATOMS >= 3:
            for a, b in pairs[:BEAM]:
                vp, vn = P[a] * P[b], N[a] * N[b]
                err3 = (want - P @ vp) + N @ vn
                for c in np.argsort(err3, kind="stable")[:keep]:
                    if c not in (a, b):
                        atoms = tuple(sorted((a, b, int(c))))
                        found.append((_key(int(err3[c]), atoms, costs), atoms))
    found.sort()
    out, seen = [], set()
    for key, atoms in found:
        if atoms not in seen:
            seen.add(atoms)
            out.append((key, atoms))
    return out[:keep]


def _distinct(table: FeatureTable, positive: np.ndarray, negative: np.ndarray) -> list[int]:
    """Atoms that hold on some positive, one per distinct vector over the positives and negatives (the
    cheapest, first in the catalogue)."""
    best: dict[bytes, int] = {}
    cols = positive | negative
    packed = np.packbits(table.matrix[:, cols], axis=1)
    for i in np.flatnonzero(table.matrix[:, positive].any(axis=1)):
        key = packed[i].tobytes()
        j = best.get(key)
        if j is None or table.atoms[i].cost < table.atoms[j].cost:
            best[key] = int(i)
    return sorted(best.values())


def learn(table: FeatureTable, positive: np.ndarray, negative: np.ndarray, alternatives: int = 0) -> list[Fit]:
    """The best rule selecting the `positive` rows and none of the `negative` ones (boolean masks over the
    table's cases), then up to `alternatives` others that are as exact; [] when there is no positive."""
    positive, negative = np.asarray(positive, bool), np.asarray(negative, bool) & ~np.asarray(positive, bool)
    want = int(positive.sum())
    if not want:
        return []
    table = table.with_thresholds(positive)
    atoms = _distinct(table, positive, negative)
    if not atoms:
        return [_fit(Rule(()), table, positive, negative)]
    P = table.matrix[np.ix_(atoms, np.flatnonzero(positive))].astype(np.float32)
    N = table.matrix[np.ix_(atoms, np.flatnonzero(negative))].astype(np.float32)
    costs = np.array([table.atoms[a].cost for a in atoms])
    best = _conjunctions(P, N, costs, want, max(alternatives + 1, 8))
    fits = [_fit(Rule((tuple(table.atoms[atoms[i]] for i in idx),)), table, positive, negative) for _, idx in best]
    if fits[0].fn and not fits[0].exact:
        cover = _cover(table, atoms, P, N, costs, positive, negative)
        if cover is not None and cover.errors < fits[0].errors:
            fits.insert(0, cover)
    top = fits[0]
    return [top, *[f for f in fits[1:] if f.errors <= top.errors][:alternatives]]


def _cover(table: FeatureTable, atoms: list[int], P: np.ndarray, N: np.ndarray, costs: np.ndarray,
           positive: np.ndarray, negative: np.ndarray) -> Fit | None:
    """Sequential covering: terms that let in no pass (or the fewest), each on the failures still left."""
    left = np.ones(P.shape[1], dtype=np.float32)
    terms: list[tuple[Atom, ...]] = []
    for _ in range(MAX_TERMS):
        if not left.any():
            break
        Pl = P * left
        # a term must let in no pass; among those, the one covering the most failures left
        found = _conjunctions(Pl, N * 1000.0, costs, int(left.sum()), 1)
        if not found:
            break
        idx = found[0][1]
        covered = np.prod(P[list(idx)], axis=0)
        if not (covered * left).any():
            break
        terms.append(tuple(table.atoms[atoms[i]] for i in idx))
        left = left * (1 - covered)
    return _fit(Rule(tuple(terms)), table, positive, negative) if terms else None


def _fit(rule: Rule, table: FeatureTable, positive: np.ndarray, negative: np.ndarray) -> Fit:
    sel = selected(rule, table)
    return Fit(rule, int((sel & positive).sum()), int((~sel & positive).sum()), int((sel & negative).sum()),
               int((~sel & negative).sum()))


def selected(rule: Rule, table: FeatureTable) -> np.ndarray:
    """The rule on every case of a table that holds its atoms (threshold atoms included where present)."""
    index = {a.text: i for i, a in enumerate(table.atoms)}
    out = np.zeros(table.matrix.shape[1], dtype=bool)
    for term in rule.terms:
        out |= np.all([table.matrix[index[a.text]] for a in term], axis=0)
    return out
