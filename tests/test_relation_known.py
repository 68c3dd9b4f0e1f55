"""Which known issue a relation record takes from the runs it derives (harness/judge/relations.py).

Hand-made payloads, as a worker answers them, judged by `relation_record` against entries written here: the
truth is the entry's selector, the case's documented output shape and the float64 oracle rounded once, never a
framework's verdict. Costs well under a second (no worker, no framework import).
"""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import numpy as np

from harness.execution.runner import oracle_for
from harness.judge.known_issues import load_known_issues
from harness.judge.relations import relation_record
from harness.model.build import make_case
from harness.numerics.inputs import NUMPY_DTYPES, make_inputs
from harness.numerics.oracle import reference
from harness.numerics.relations import variants

ENTRIES = """\
issues:
  - id: refuses-grouped-without-switch
    backend: target
    host: {tf_onednn: false}
    cases: {op: conv2d, groups: {min: 2}}
    status: rejected
    reason: the kernels the switch picks refuse a grouped conv
    link: none
  - id: partner-comes-back-too-long
    backend: target
    cases: {op: conv_transpose2d}
    status: shape_mismatch
    reason: the transposed conv ignores its crop
    link: none
  - id: refuses-another-batch
    backend: target
    cases: {op: conv3d, output: relation:batch}
    status: rejected
    reason: the graph kept from the case's batch refuses another batch
    link: none
  - id: one-channel-conv3d-wrong
    backend: target
    cases: {op: conv3d, in_channels: 1}
    status: mismatch
    reason: the kernel for one input channel writes part of the output wrong
    link: none
"""


def rounded(case, inputs) -> np.ndarray:
    """A correctly rounded target: the float64 oracle rounded once to the case dtype."""
    return np.asarray(reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)[0]).astype(NUMPY_DTYPES[case.dtype])


def judge(tmp_path, name, case, subs, host=None, main=None):
    path = tmp_path / "known.yaml"
    path.write_text(textwrap.dedent(ENTRIES))
    inputs = make_inputs(case)
    oracle = oracle_for(case, inputs)
    runs = variants(case, inputs, oracle, (name,))
    array = rounded(case, inputs) if main is None else main(rounded(case, inputs))
    payload = {"status": "ok", "array": array, "relation_runs": runs,
               "relations": {k: v(runs[k.partition(":")[0]]) if callable(v) else v for k, v in subs.items()},
               "relation_names": (name,)}
    worker = SimpleNamespace(version="1", device="cpu", host=host or {"tf_onednn": True})
    return relation_record(name, case, "target", worker, payload, inputs, oracle, load_known_issues(path), None)


def ok(variant) -> dict:
    return {"status": "ok", "array": rounded(variant.case, variant.inputs)}


GROUPED = dict(op="conv2d", in_channels=4, out_channels=4, groups=2, input_size=[5, 5], kernel_size=3, padding=1)


def test_a_kernel_variant_refusal_is_matched_under_its_own_workers_facts(tmp_path):
    """The case's worker decided tf_onednn true; the variant's worker (a process setting) decided false and
    refused: the entry selecting tf_onednn false explains that run, and only under the variant's facts."""
    refused = {"status": "rejected", "message": "grouped convolutions are not supported"}
    rec = judge(tmp_path, "layout", make_case(**GROUPED),
                {"layout": ok, "kernels:SWITCH=0": {**refused, "host": {"tf_onednn": False}}})
    assert rec.status == "rejected" and rec.known_issue == "refuses-grouped-without-switch", rec.message
    assert rec.message.startswith("the kernel variant SWITCH=0:")
    unsaid = judge(tmp_path, "layout", make_case(**GROUPED), {"layout": ok, "kernels:SWITCH=0": refused})
    assert unsaid.status == "rejected" and unsaid.known_issue is None  # judged under the case's worker's facts


def test_a_derived_run_of_the_wrong_shape_takes_its_forward_shape_issue(tmp_path):
    """The adjoint partner (a conv_transpose2d) comes back longer than its documented output shape: the relation
    is a mismatch, explained by the entry that says the partner's own forward result has the wrong shape."""
    case = make_case(op="conv2d", in_channels=3, out_channels=4, input_size=[7, 8], kernel_size=3, padding=1)

    def too_long(variant) -> dict:
        out = rounded(variant.case, variant.inputs)
        return {"status": "ok", "array": np.pad(out, [(0, 0), (0, 0), (1, 1), (1, 1)])}

    rec = judge(tmp_path, "adjoint", case, {"adjoint": too_long})
    assert rec.status == "mismatch" and rec.known_issue == "partner-comes-back-too-long", rec.message
    assert rec.known_status == ["mismatch"] and "the adjoint partner: known issue" in rec.message
    right = judge(tmp_path, "adjoint", case, {"adjoint": ok})
    assert right.status in ("pass", "within_bound") and right.known_issue is None, right.message


def test_a_wrong_case_explains_its_relation_where_the_relations_own_entry_lists_another_status(tmp_path):
    """The case's own forward result is wrong (an entry says so) and the batch relation sees it differ from the
    batch runs: the entry for the batch relation selects the record but lists only `rejected`, so it does not
    explain a mismatch; the case's own entry does. A right case under the same entries stays unexplained by
    either (it passes)."""
    case = make_case(op="conv3d", in_channels=1, out_channels=2, input_size=[3, 4, 4], kernel_size=2, batch=2)

    def garbage(out: np.ndarray) -> np.ndarray:
        wrong = out.copy()
        wrong[0, 0, 0, 0, 0] = np.float32(3.5e36)  # one element the kernel never wrote
        return wrong

    inputs = make_inputs(case)
    subs = {key: ok for key in variants(case, inputs, oracle_for(case, inputs), ("batch",))}
    assert subs, "the batch relation applies to a batch-2 case"
    rec = judge(tmp_path, "batch", case, subs, main=garbage)
    assert rec.status == "mismatch" and rec.known_issue == "one-channel-conv3d-wrong", rec.message
    assert rec.known_status == ["mismatch"] and "the case itself: known issue" in rec.message
    right = judge(tmp_path, "batch", case, subs)
    assert right.status in ("pass", "within_bound"), right.message
