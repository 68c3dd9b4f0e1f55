"""The relation runs a batched build is handed ahead (harness/execution/ahead.py).

The controller derives each relation run from the case, its inputs and its oracle (relation_exec.prepare_relations)
and sends it to the main worker; the worker derives the same runs on its own for Backend.prepare. The two must
agree model for model, or the prepared builds are never found and every run builds alone again. The live test runs
a case with every relation on tvm in an empty cache and checks that the batched build covered the derived runs
(its report counts them) and that the records are those of the same run built one case at a time.
"""

from __future__ import annotations

import pytest

from backends.artifacts import case_key
from backends.tvm.direct import TvmBackend
from harness.execution.ahead import ahead, oracle_for
from harness.execution.records import Record
from harness.execution.relation_exec import RelationPlan, prepare_relations
from harness.execution.runner import RunInfo, run_cases
from harness.judge.verdict import Verdicts
from harness.numerics.inputs import make_inputs
from harness.numerics.relations import RELATIONS, applies
from tests.helpers import make_case

CASES = [
    make_case(id="c2d", op="conv2d", in_channels=3, out_channels=4, input_size=6, kernel_size=3, padding=1, bias=True),
    make_case(id="t1d_b2", op="conv_transpose1d", in_channels=4, out_channels=2, input_size=5, kernel_size=3, stride=2,
              output_padding=1, batch=2, groups=2),
    make_case(id="c3d_cl", op="conv3d", in_channels=2, out_channels=2, input_size=4, kernel_size=2,
              layout="channels_last", dtype="float16"),
]


def controller_models(case) -> set[str]:
    """The models of the runs the controller sends the case's main worker (salt-free keys)."""
    inputs = make_inputs(case)
    rel = prepare_relations(RelationPlan(RELATIONS), case, inputs, oracle_for(case, inputs))
    assert rel is not None
    return {case_key(rel.runs[k].case, rel.runs[k].inputs, {}) for k in rel.keys("main")}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_worker_derives_every_model_the_controller_sends(case):
    cases, inputs = ahead([case], [RELATIONS])
    handed = [case_key(c, i, {}) for c, i in zip(cases, inputs)]
    assert len(handed) == len(set(handed))  # each model once
    sent = controller_models(case) | {case_key(case, make_inputs(case), {})}
    assert sent == set(handed)
    assert len(sent) > 4  # batch sizes, layout, scaled and subnormal data, the adjoint partner


def test_cases_without_relations_are_handed_alone():
    cases, inputs = ahead(CASES, [(), (), ()])
    assert [c.id for c in cases] == [c.id for c in CASES]
    assert all((a.w == make_inputs(c).w).all() for c, a in zip(CASES, inputs))


def run_tvm(cases, plan: RelationPlan) -> tuple[list[Record], RunInfo]:
    records: list[Record] = []
    info = run_cases(cases, [("tvm", "cpu")], records.append, Verdicts(None), timeout=300.0, relations=plan)
    return records, info


@pytest.mark.skipif(TvmBackend().unavailable_reason() is not None, reason="needs apache-tvm")
def test_tvm_builds_the_relation_runs_in_its_batches(tmp_path, monkeypatch):
    plan = RelationPlan(("batch", "scaling", "adjoint"))
    cases = CASES[:2]
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path / "batched"))
    batched, info = run_tvm(cases, plan)
    derived = len(ahead(cases, [plan.names] * len(cases))[0])
    assert derived > 3 * len(cases)
    assert [b["to_build"] for b in info.builds.values()] == [derived]
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path / "alone"))
    monkeypatch.setenv("CONVDIFF_BATCH", "0")
    alone, _ = run_tvm(cases, plan)

    def table(records: list[Record]) -> list[tuple]:
        return sorted((r.case_id, r.output, r.status, r.max_abs_err) for r in records)

    assert table(batched) == table(alone)
    judged = sum(applies(c, n) for c in cases for n in plan.names)
    assert sum(r.output.startswith("relation:") for r in batched) == judged >= 4
