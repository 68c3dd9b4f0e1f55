"""The metamorphic relations: their runs, bounds, records and property table, and the mutants that break one each.

The truth here is independent of any framework: the float64 oracle rounded once (a correctly rounded result,
so every relation holds bitwise for it), hand-made arrays, and the relation mutants (backends/testing/
relation_mutants.py: NumPy only, no framework import). Costs seconds (the mutants' workers are NumPy processes);
the relations over every installed backend run in the nightly (tests/test_relations_full.py).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from backends.testing.relation_mutants import RELATION_MUTANTS
from harness.commands.cli import main as cli_main
from harness.execution.records import Record
from harness.execution.relation_exec import RelationPlan
from harness.execution.runner import oracle_for, run_cases
from harness.judge.verdict import Verdicts
from harness.model.build import make_case
from harness.numerics.bound import conv_bound, error_bound, pair_bound
from harness.numerics.inputs import NUMPY_DTYPES, make_inputs
from harness.numerics.oracle import reference
from harness.numerics.relation_pairs import compare, needed, outcome
from harness.numerics.relations import (
    MAX_RELATION_MACS,
    RELATIONS,
    RelationError,
    adjoint_partner,
    applies,
    forms_products,
    grid_step,
    min_normal_exponent,
    parse_relations,
    scaling_powers,
    variants,
)
from reports.properties import parse_requirements, properties, unmet

pytestmark = pytest.mark.xdist_group("test_relations")

CONV = dict(op="conv2d", in_channels=4, out_channels=5, input_size=[7, 6], kernel_size=3, stride=2, padding=1, bias=True)
TRANSPOSE = dict(op="conv_transpose2d", in_channels=4, out_channels=6, input_size=[4, 5], kernel_size=3, stride=2,
                 padding=1, output_padding=1, groups=2)


def rounded_oracle(case, inputs):
    """A correctly rounded target: the float64 oracle rounded once to the case dtype."""
    return np.asarray(reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)[0]).astype(NUMPY_DTYPES[case.dtype])


def outcomes(case, run=rounded_oracle):
    inputs = make_inputs(case)
    oracle = oracle_for(case, inputs)
    runs = variants(case, inputs, oracle, RELATIONS)
    outs = {"main": run(case, inputs), **{k: run(v.case, v.inputs) for k, v in runs.items()}}
    return {r: outcome(r, case, inputs, oracle, runs, {k: outs[k] for k in needed(r, case, runs)})
            for r in RELATIONS if applies(case, r)}


def test_parse_relations():
    assert parse_relations("all") == RELATIONS
    assert parse_relations("layout, batch") == ("batch", "layout")  # RELATIONS order
    with pytest.raises(RelationError, match="bogus"):
        parse_relations("batch,bogus")


@pytest.mark.parametrize("fields", [
    CONV, TRANSPOSE,
    dict(op="conv1d", in_channels=2, out_channels=4, input_size=11, kernel_size=3, dilation=2, padding="same", batch=2),
    dict(op="conv3d", in_channels=2, out_channels=2, input_size=5, kernel_size=2, stride=2, layout="channels_last"),
    dict(op="conv_transpose1d", in_channels=3, out_channels=3, input_size=6, kernel_size=4, stride=3, padding=[[2, 0]]),
])
def test_a_correctly_rounded_target_keeps_every_relation(fields):
    """The same bits under batch, layout, threads, runs and powers of two; the adjoint and the scaled subnormal
    probe within their bounds (two float64 inner products; rounding to the subnormal grid)."""
    got = outcomes(make_case(**fields))
    for rel, out in got.items():
        allowed = ("pass", "within_bound") if rel in ("adjoint", "subnormal") else ("pass",)
        assert out.status in allowed, f"{rel}: {out.message()}"
    assert got["subnormal"].facts == {"inputs": "kept", "products": "kept", "outputs": "kept"} or \
        set(got["subnormal"].facts.values()) == {"kept"}


@pytest.mark.parametrize("fields", [CONV, TRANSPOSE, dict(op="conv2d", in_channels=6, out_channels=4, input_size=[9, 8],
                                                          kernel_size=[3, 2], stride=[2, 3], dilation=[2, 1],
                                                          padding=[[2, 0], [1, 1]], groups=2)])
def test_the_adjoint_partner_maps_the_output_shape_back(fields):
    """Hand-checkable: the partner's output is the case's input shape, its input the case's output shape, and the
    two float64 inner products agree to float64 rounding on float64 data."""
    case = make_case(**{**fields, "dtype": "float64"})
    partner = adjoint_partner(case)
    assert partner is not None and partner.op != case.op
    assert partner.geometry.out_size == case.input_size and partner.input_size == case.geometry.out_size
    inputs = make_inputs(case)
    y = np.random.default_rng(1).standard_normal((case.batch, case.out_channels, *case.geometry.out_size))
    a = reference(dataclasses.replace(case, bias=False), inputs.x, inputs.w, None)[0]
    b = reference(partner, y, inputs.w, None)[0]
    lhs, rhs = float(np.sum(y * a)), float(np.sum(b * inputs.x))
    assert math.isclose(lhs, rhs, rel_tol=1e-12, abs_tol=1e-12)


def test_no_partner_where_output_padding_exceeds_the_padding():
    case = make_case(op="conv_transpose1d", in_channels=1, out_channels=1, input_size=5, kernel_size=2, stride=1,
                     dilation=3, output_padding=2)
    assert adjoint_partner(case) is None and not applies(case, "adjoint")


def test_subnormal_relation_leaves_out_cases_whose_outputs_read_padding_only():
    # findings.yaml f32_conv3d_all_padding_output: height input 1, kernel 2 at dilation 2, padding 1, stride 3:
    # the one height output reads padded rows 0 and 2, both padding, so no input meets a weight and flushing
    # subnormal data to zero cannot change a result. With padding 2 on that axis, padded row 2 is input row 0.
    case = make_case(op="conv3d", in_channels=1, out_channels=3, input_size=[5, 1, 3], kernel_size=[7, 2, 2],
                     stride=[1, 3, 2], padding=[3, 1, 2], dilation=[1, 2, 2])
    assert not forms_products(case) and not applies(case, "subnormal") and applies(case, "scaling")
    reads = make_case(op="conv3d", in_channels=1, out_channels=3, input_size=[5, 1, 3], kernel_size=[7, 2, 2],
                      stride=[1, 3, 2], padding=[3, 2, 2], dilation=[1, 2, 2])
    assert forms_products(reads) and applies(reads, "subnormal")
    # a transposed conv whose crop removes the one position an input reaches: input 1, kernel 1, stride 2 and
    # output_padding 1 give positions 0 (the tap's) and 1 (the extension); cropping 1 before keeps position 1 only
    crop = make_case(op="conv_transpose1d", in_channels=2, out_channels=2, input_size=1, kernel_size=1, stride=2,
                     padding=[[1, 0]], output_padding=1)
    assert crop.geometry.out_size == (1,) and not forms_products(crop)


def test_relations_leave_out_cases_above_the_size_limit():
    # 64 x 64 channels, k=3, a 64 x 64 output: 64 * 64 * 9 * 4096 = 150,994,944 multiply-adds (the deeplabv3
    # layer 13 shape); 128 output channels doubles it past the limit, 302 M
    small = make_case(op="conv2d", in_channels=64, out_channels=64, input_size=64, kernel_size=3, padding=1)
    large = dataclasses.replace(small, out_channels=128)
    assert 150_994_944 <= MAX_RELATION_MACS < 301_989_888
    assert [r for r in RELATIONS if applies(small, r)] == [r for r in RELATIONS if r != "batch"]
    assert not any(applies(large, r) for r in RELATIONS)


def test_scaling_powers_keep_every_value_normal_and_finite():
    case = make_case(**{**CONV, "dtype": "float16"})
    inputs = make_inputs(case)
    ref, scale = oracle_for(case, inputs)[:2]
    info = np.finfo(np.float16)
    for k in scaling_powers(case, inputs, ref, scale):
        assert 2.0 ** k * float(scale.max()) <= float(info.max) / 4
        nz = np.abs(inputs.x.astype(np.float64))
        assert 2.0 ** k * nz[nz > 0].min() >= 2.0 ** min_normal_exponent("float16")


def test_pair_bound_is_twice_the_forward_bound():
    case = make_case(**CONV)
    inputs = make_inputs(case)
    ref, scale = oracle_for(case, inputs)[:2]
    assert np.array_equal(pair_bound(case, ref, scale), 2 * error_bound(case, ref, scale))
    assert np.all(conv_bound(case, ref, scale, underflow=False) <= conv_bound(case, ref, scale))


def test_compare_says_bitwise_within_and_beyond():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    assert compare("g", a, a.copy(), 0.0).status == "pass"
    b = np.nextafter(a, np.float32(10))
    within = compare("g", b, a, np.full(3, 1e-6))
    assert within.status == "within_bound" and within.differing == 3 and within.ratio <= 1
    beyond = compare("g", b, a, np.full(3, 1e-9))
    assert beyond.status == "mismatch" and beyond.ratio > 1
    assert compare("g", a[:2], a, 1.0).status == "mismatch"  # shapes differ
    assert compare("g", np.array([np.nan], np.float32), np.array([1.0], np.float32), 1.0).status == "mismatch"


def test_flushing_subnormals_is_diagnosed_as_flush_to_zero():
    """FTZ/DAZ emulated on the rounded oracle: the subnormal relation fails with the diagnosis, facts flushed."""
    def flushing(case, inputs):
        tiny = float(np.finfo(NUMPY_DTYPES[case.dtype]).smallest_normal)
        out = rounded_oracle(case, dataclasses.replace(
            inputs, x=np.where(np.abs(inputs.x) < tiny, 0, inputs.x).astype(inputs.x.dtype)))
        return np.where(np.abs(out) < tiny, 0, out).astype(out.dtype)

    got = outcomes(make_case(**CONV), flushing)
    sub = got["subnormal"]
    assert sub.status == "mismatch" and sub.flush_to_zero, sub.message()
    assert sub.facts["inputs"] == "flushed" and sub.facts["outputs"] == "flushed"
    assert got["scaling"].status == "pass"  # scaling stays in the normal range: flushing does not touch it


@pytest.fixture(scope="module")
def mutant_records() -> list[Record]:
    """Every relation mutant over a conv and a grouped strided transposed conv, all relations, real workers."""
    cases = [make_case(id="conv", **CONV), make_case(id="transpose", **TRANSPOSE)]
    records: list[Record] = []
    run_cases(cases, [(f"mutant:{bug}", "cpu") for bug in RELATION_MUTANTS], records.append, Verdicts(),
              timeout=60.0, relations=RelationPlan(RELATIONS))
    return records


@pytest.mark.parametrize("bug", list(RELATION_MUTANTS))
def test_each_relation_mutant_is_caught_by_its_own_relation_and_no_other(mutant_records, bug):
    own = RELATION_MUTANTS[bug]
    recs = [r for r in mutant_records if r.backend == f"mutant:{bug}" and r.output.startswith("relation:")]
    assert {r.output for r in recs} == {f"relation:{n}" for n in RELATIONS}, [r.output for r in recs]
    for r in recs:
        rel = r.output.partition(":")[2]
        caught = r.status == "mismatch" if rel in ("adjoint", "subnormal") else r.status != "pass"
        if rel == own:
            assert caught, f"{bug} not caught by {rel}: {r.status} {r.message}"
        else:
            assert not caught and r.status in ("pass", "within_bound"), f"{bug} also caught by {rel}: {r.message}"
    own_recs = [r for r in recs if r.output == f"relation:{own}"]
    if own in ("threads", "determinism"):  # a sum order: not the same bits, inside the bound
        assert all(r.status == "within_bound" for r in own_recs)
    else:
        assert all(r.status == "mismatch" and (r.bound_ratio or math.inf) > 1 for r in own_recs)
    if bug == "flush_to_zero":
        assert all(r.diagnosis == "flush_to_zero" and r.relation["subnormal"]["inputs"] == "flushed" for r in own_recs)


def test_kernel_variants_are_pairs_of_the_layout_record(mutant_records):
    """Each declared kernel variant is its own pair, against the default kernels of the same case: one beyond the
    bound (x and w in bfloat16), one within it (a float32 sum, its worker started with the variant's environment);
    a target that declares none says so in a pair of its own, which leaves the record's status to the others."""
    for rec in (r for r in mutant_records if r.output == "relation:layout" and r.backend != "mutant:layout_dependent_path"):
        pairs = {p["group"]: p for p in rec.relation["pairs"]}
        assert pairs["other layout"]["status"] == "pass", rec.message
        if rec.backend == "mutant:kernel_variant_differs":
            assert rec.status == "mismatch" and rec.bound_ratio > 1, rec.message
            assert pairs["kernel variant bfloat16-kernel"]["status"] == "mismatch"
            assert pairs["kernel variant bfloat16-kernel"]["ratio"] > 1
            assert pairs["kernel variant float32-sum"]["status"] == "within_bound"
            assert 0 < pairs["kernel variant float32-sum"]["ratio"] <= 1
            assert "kernel variant bfloat16-kernel: BEYOND bound" in rec.message
        else:
            assert rec.status == "pass", rec.message
            assert pairs["kernel variants"]["status"] == "unsupported"
            assert "declares no kernel variants" in pairs["kernel variants"]["detail"]
            assert "kernel variants: unsupported (" in rec.message


def test_kernel_variants_toggle_what_the_framework_decided():
    """Declared in the controller from the main worker's live host facts, without importing a framework: the
    variant is the other side of the framework's own choice, and a process setting carries its environment."""
    from backends.base import Unsupported
    from backends.registry import get_backend

    tf = get_backend("tensorflow")
    assert [(v.name, v.env) for v in tf.kernel_variants({"tf_onednn": True})] == [
        ("TF_ENABLE_ONEDNN_OPTS=0", (("TF_ENABLE_ONEDNN_OPTS", "0"),))]
    assert [v.name for v in tf.kernel_variants({"tf_onednn": False})] == ["TF_ENABLE_ONEDNN_OPTS=1"]
    assert [v.name for v in get_backend("paddle-inference").kernel_variants({"paddle_inference_onednn": True})] == [
        "config.disable_mkldnn()"]
    assert [v.name for v in get_backend("onnxruntime").kernel_variants({})] == ["ORT_DISABLE_ALL"]
    assert [v.name for v in get_backend("torch").kernel_variants({"torch_mkldnn": True})] == [
        "torch.backends.mkldnn.enabled=False"]
    with pytest.raises(Unsupported, match="no oneDNN"):
        get_backend("torch").kernel_variants({"torch_mkldnn": False})
    for name in ("openvino", "jax", "tf-xla"):
        with pytest.raises(Unsupported):
            get_backend(name).kernel_variants({})


def test_the_property_table_and_the_gate(mutant_records):
    table = properties(mutant_records)
    cell = table["targets"]["mutant:batch_dependent_kernel-cpu"]["batch"]["float32"]
    assert cell["property"] == "violated" and cell["max_bound_ratio"] > 1
    assert cell["case"].rpartition("::")[2] in ("conv", "transpose")
    assert table["targets"]["mutant:thread_dependent_sum-cpu"]["threads"]["float32"]["property"] == "within_bound"
    assert table["targets"]["mutant:thread_dependent_sum-cpu"]["batch"]["float32"]["property"] == "bitwise"
    assert table["targets"]["mutant:flush_to_zero-cpu"]["subnormal"]["float32"]["subnormals"]["inputs"] == "flushed"
    lines = unmet(table, parse_requirements(["bitwise:batch,threads"]))
    assert any("bitwise:batch not met: mutant:batch_dependent_kernel-cpu float32 is violated" in ln for ln in lines)
    assert any("bitwise:threads not met: mutant:thread_dependent_sum-cpu float32 is within_bound" in ln for ln in lines)
    assert not unmet(table, parse_requirements(["within_bound:threads"]))
    assert unmet(table, parse_requirements(["within_bound:batch"]))
    with pytest.raises(ValueError):
        parse_requirements(["exact:batch"])


def test_require_fails_the_run_with_one_line_per_unmet_cell(tmp_path, capsys):
    cases = tmp_path / "c.yaml"
    cases.write_text("cases:\n  - id: c\n    op: conv2d\n    in_channels: 3\n    out_channels: 4\n"
                     "    input_size: 6\n    kernel_size: 3\n")
    rc = cli_main(["run", str(cases), "--backends", "mutant:thread_dependent_sum", "--require", "bitwise:threads",
                   "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 1 and "requirement bitwise:threads not met: mutant:thread_dependent_sum-cpu float32" in out
    table = json.loads((tmp_path / "out" / "properties.json").read_text())
    assert table["targets"]["mutant:thread_dependent_sum-cpu"]["threads"]["float32"]["property"] == "within_bound"
    assert cli_main(["run", str(cases), "--backends", "mutant:thread_dependent_sum", "--require", "bogus:threads",
                     "--out", str(tmp_path / "out2")]) == 2


def test_pytest_items_per_relation_and_a_known_relation_issue_is_xfail(pytester):
    """--convdiff-relations: one item per case, target and relation; a relation record's known issue
    (`output: relation:layout`) is an xfail, the forward item passes, within_bound passes."""
    from tests.helpers import run_pytest

    pytester.mkdir("cases")
    pytester.makeini("[pytest]\nconvdiff_cases = cases\n")
    pytester.path.joinpath("cases", "c.yaml").write_text(
        "cases:\n  - id: c\n    op: conv2d\n    in_channels: 3\n    out_channels: 4\n    input_size: 6\n    kernel_size: 3\n")
    pytester.path.joinpath("cases", "known_issues.yaml").write_text(
        "issues:\n  - id: layout_path\n    backend: mutant:layout_dependent_path\n    cases: {output: relation:layout}\n"
        "    status: mismatch\n    reason: the seeded channels-last path\n    link: https://example.invalid/layout\n")
    result = run_pytest(pytester, "cases", "--convdiff-backends", "mutant:layout_dependent_path,mutant:thread_dependent_sum",
                        "--convdiff-relations", "layout,threads", "-rxX")
    out = result.stdout.str()
    assert "c[mutant:layout_dependent_path-cpu-relation:layout]" in out and "example.invalid/layout" in out
    result.assert_outcomes(passed=5, xfailed=1)  # 2 forward items, 2 threads items (one within_bound), 1 layout


def test_grid_step_is_the_largest_power_of_two_dividing_every_element():
    assert grid_step(np.array([0.75, -0.5, 0.0])) == 0.25
    assert grid_step(np.array([6.0, 4.0])) == 2.0
    assert grid_step(np.zeros(3)) == math.inf


def test_scaling_down_keeps_every_partial_sum_normal():
    """A partial sum can cancel far below every product and output: on this conv_transpose1d (tf_padding.yaml's
    torch_pad_outpad_t1d at its seed) the products of output channel 0 at position 8 sum to 4.4e-4, below its
    output (5.8e-3, with the bias) and its least product (7.0e-3): k = -118 made that sum 1.3e-39, a float32
    subnormal. Every partial sum, in the bias-first and the bias-last order, stays at least 2^emin at k < 0."""
    case = make_case(op="conv_transpose1d", in_channels=3, out_channels=4, input_size=7, kernel_size=4, stride=2,
                     padding=1, bias=True, seed=1224277012)
    inputs = make_inputs(case)
    ref, scale = oracle_for(case, inputs)[:2]
    x, w, b = (np.asarray(a, dtype=np.float64) for a in (inputs.x[0], inputs.w, inputs.b))
    sums = []
    for o in range(case.out_channels):
        for t in range(case.geometry.out_size[0]):
            terms = [x[c, i] * w[c, o, j] for c in range(case.in_channels) for i in range(case.input_size[0])
                     for j in range(case.kernel_size[0]) if 2 * i - 1 + j == t]
            for acc in (b[o], 0.0):
                for p in terms:
                    acc += p
                    sums.append(abs(acc))
    least = min(s for s in sums if s > 0)
    assert least < 1e-3  # the cancelling sum: this case needs the partial sums, not only products and outputs
    down = [k for k in scaling_powers(case, inputs, ref, scale) if k < 0]
    assert down and all(2.0 ** k * least >= 2.0 ** min_normal_exponent("float32") for k in down)
