"""Every relation on every installed backend over the smoke tier, known issues applied: nothing unexpected.

Nightly only (CONVDIFF_FULL_TESTS=1): the relations run each case again in up to 20 forms (batches of 3 and 7
and their rows, the other layout, scaled and subnormal data, the adjoint partner) and start more workers per
backend (a second one, a thread-count one, one per kernel variant); over the 34 installed backends and the smoke tier that is minutes of a 2-core machine, far beyond
what `make test` may spend (tests/test_relations.py covers the relations there with NumPy mutants in seconds).
A verdict here depends on the host (which kernels a CPU gets, whether they flush subnormals): the known
issues state it with `host:` selectors, measured, so this test asserts only that each one is explained.
"""

from __future__ import annotations

import pytest

from backends.registry import installed_backends
from harness.commands.selection import known_issues_for
from harness.execution.records import Record
from harness.execution.relation_exec import RelationPlan
from harness.execution.runner import run_cases
from harness.judge.verdict import Verdicts
from harness.model.loader import load_cases
from harness.numerics.relations import RELATIONS

pytestmark = [pytest.mark.xdist_group("test_relations_full"),
              pytest.mark.nightly("every relation on every case of a file: see the module docstring")]


@pytest.fixture(scope="module")
def records() -> list[Record]:
    cases = [c for c in load_cases(["cases"]) if c.tier == "smoke"]
    backends = installed_backends()
    out: list[Record] = []
    run_cases(cases, [(b, "cpu") for b in backends], out.append, Verdicts(known_issues_for(["cases"], [], backends)),
              timeout=300.0, relations=RelationPlan(RELATIONS))
    return out


def test_every_relation_record_is_explained(records):
    rel = [r for r in records if r.output.startswith("relation:")]
    assert rel, "no relation record"
    bad = [f"{r.file}::{r.case_id} {r.backend} {r.output} {r.status} {r.message[:120]}" for r in rel if r.unexpected]
    assert not bad, "\n".join(bad)


def test_every_backend_gives_every_relation_it_can(records):
    """A record per relation for every backend with a float case: none silently missing."""
    seen: dict[str, set[str]] = {}
    for r in records:
        if r.output.startswith("relation:"):
            seen.setdefault(r.backend, set()).add(r.output.partition(":")[2])
    for backend, names in seen.items():
        assert {"determinism", "batch", "threads", "layout"} <= names, (backend, names)
