"""Known issues: selectors, literal-bracket case globs, `when` predicates, staleness."""

from __future__ import annotations

import numpy as np
import pytest

from harness.judge.known_issues import derived_names, load_known_issues
from harness.model.build import make_case
from harness.model.loader import load_cases
from harness.model.predicate import PredicateError, compile_predicate, evaluate
from harness.model.yamlmap import InputError

CASE = make_case(id="x", op="conv_transpose1d", in_channels=2, out_channels=2, input_size=7, kernel_size=3,
                 stride=2, padding="same", tags=["t"])


def write(tmp_path, body: str):
    p = tmp_path / "known_issues.yaml"
    p.write_text("issues:\n" + body)
    return load_known_issues(p)


ENTRY = "  - id: e\n    backend: {backend}\n    cases: {cases}\n    status: mismatch\n    reason: r\n    link: l\n"


@pytest.mark.parametrize("cases,hit", [
    ("{op: 'conv_transpose*', padding: same}", True),
    ("{stride: 2, kernel_size: 3}", True),
    ("{stride: {min: 3}}", False),
    ("{tags: t}", True),
    ("{case: 'x'}", True),
    ("{when: 'any(n % s for n, s in zip(input_size, stride))'}", True),
    ("{when: 'all(k >= s * 2 for k, s in zip(kernel_size, stride))'}", False),
])
def test_selectors(tmp_path, cases, hit):
    known = write(tmp_path, ENTRY.format(backend="torch", cases=cases))
    assert (known.match(CASE, "torch", "cpu") is not None) == hit
    assert known.match(CASE, "paddle", "cpu") is None


def test_case_glob_takes_brackets_literally(tmp_path):
    import dataclasses

    swept = dataclasses.replace(CASE, id="a[stride=2]")
    known = write(tmp_path, ENTRY.format(backend="'*'", cases="{case: 'a[stride=*]'}"))
    assert known.match(swept, "tvm", "cpu") is not None


@pytest.mark.parametrize("expr", ["__import__('os')", "input_size.count(1)", "open('x')", "[x for x in ()].pop()"])
def test_predicates_refuse_anything_but_arithmetic(expr):
    with pytest.raises(PredicateError):
        compile_predicate(expr)


def test_predicate_evaluates_over_params():
    code = compile_predicate("max(input_size) > 5 and padding == 'same'")
    assert evaluate(code, CASE.params())
    nested = compile_predicate("any(k < max(input_size) for k in kernel_size)")  # params visible in generators
    assert evaluate(nested, CASE.params())
    # prod: a GEMM's size from the case (7 input positions x 2 output channels x 3 taps x 2 input channels = 84)
    assert evaluate(compile_predicate("prod(input_size) * out_per_group * acc_len == 84"),
                    {**CASE.params(), **derived_names(CASE, "out")})
    assert not evaluate(compile_predicate("prod(kernel_size) * 2 > 6"), CASE.params())


@pytest.mark.parametrize("expr,output,hit", [
    ("out_size == (14,)", "out", True),  # SAME transposed: input 7 x stride 2
    ("out_size[-1] == 13", "out", False),
    ("acc_len == 6", "out", True),  # 2 input channels x 3 taps (harness/numerics/bound.py's K)
    ("acc_len == 7", "grad_weight", True),  # a transposed conv's weight gradient sums over batch x input positions
])
def test_predicate_derived_names(tmp_path, expr, output, hit):
    known = write(tmp_path, ENTRY.format(backend="torch", cases=f"{{when: '{expr}', output: '*'}}"))
    assert (known.match(CASE, "torch", "cpu", output=output) is not None) == hit


def test_derived_names_never_match_an_invalid_case(tmp_path):
    import dataclasses

    known = write(tmp_path, ENTRY.format(backend="torch", cases="{when: 'len(out_size) >= 0'}"))
    assert known.match(CASE, "torch", "cpu") is not None
    assert known.match(dataclasses.replace(CASE, geometry=None, expect="invalid"), "torch", "cpu") is None


def test_bad_predicate_is_a_one_line_input_error(tmp_path):
    with pytest.raises(InputError, match=r"known_issues.yaml:\d+: cases.when: 'Attribute' is not allowed"):
        write(tmp_path, ENTRY.format(backend="torch", cases="{when: 'stride.x'}"))


def test_stale_entry_is_found_against_the_corpus(tmp_path):
    known = write(tmp_path, ENTRY.format(backend="torch", cases="{op: conv4d}") + ENTRY.replace("id: e", "id: f").format(
        backend="torch", cases="{op: conv2d}"))
    assert [e.id for e in known.stale([CASE], ["torch"])] == ["e", "f"]
    assert [e.id for e in known.stale(load_cases(["cases/conv2d.yaml"]), ["torch"])] == ["e"]


def test_project_known_issues_all_match_something():
    from backends.registry import real_backends

    known = load_known_issues("cases/known_issues.yaml")
    assert known.entries, "cases/known_issues.yaml is empty"
    assert [e.id for e in known.stale(load_cases(["cases"]), real_backends())] == []
    assert all(e.reason and e.link for e in known.entries)


HOST_ENTRY = ENTRY.format(backend="'*'", cases="{op: 'conv_transpose*'}") + "    host: {host}\n"
AVX2_TF = {"cpu_flags": ["avx", "avx2", "fma"], "tf_onednn": False, "torch_cpu_capability": "AVX2"}
AVX512_TF = {"cpu_flags": ["avx2", "avx512f", "avx512_bf16"], "tf_onednn": True, "torch_cpu_capability": "AVX512"}


@pytest.mark.parametrize("host,on_avx2,on_avx512", [
    ("{tf_onednn: false}", True, False),
    ("{cpu_flags: {lacks: avx512_bf16}}", True, False),
    ("{cpu_flags: {has: [avx2, avx512f]}}", False, True),
    ("{cpu_flags: avx2}", True, True),                      # a scalar against a list fact: contains it
    ("{torch_cpu_capability: [AVX2, DEFAULT]}", True, False),
    ("{torch_cpu_capability: 'AVX5*', tf_onednn: true}", False, True),
])
def test_host_selector(tmp_path, host, on_avx2, on_avx512):
    known = write(tmp_path, HOST_ENTRY.replace("{host}", host))
    assert (known.match(CASE, "tensorflow", "cpu", AVX2_TF) is not None) == on_avx2
    assert (known.match(CASE, "tensorflow", "cpu", AVX512_TF) is not None) == on_avx512
    # without facts (collection, the stale check) the entry may match; a target lacking the fact never does
    assert known.match(CASE, "tensorflow", "cpu") is not None
    assert known.match(CASE, "tensorflow", "cpu", {"machine": "x86_64"}) is None
    assert [e.id for e in known.candidates(CASE, "tensorflow", "cpu")] == ["e"]


@pytest.mark.parametrize("host,field", [
    ("{tf_onednn_on: true}", "host.tf_onednn_on"),   # not a fact
    ("{cpu_flags: {contains: avx2}}", "host.cpu_flags"),
    ("[tf_onednn]", "host"),
])
def test_bad_host_selector_is_a_one_line_input_error(tmp_path, host, field):
    with pytest.raises(InputError) as exc:
        write(tmp_path, HOST_ENTRY.replace("{host}", host))
    assert f": {field}: " in str(exc.value) and "\n" not in str(exc.value)
    assert str(exc.value).startswith(f"{tmp_path / 'known_issues.yaml'}:8:")


def test_max_rel_err_bounds_what_an_entry_explains(tmp_path):
    """A precise entry (a constant rounded to float32: rel_err <= 2^-24) explains small mismatches only; a
    gross one on the same case goes to the next entry, or to none (unexpected)."""
    small = ENTRY.format(backend="torch", cases="{op: conv_transpose1d}").replace("id: e", "id: small")
    small = small.replace("    status: mismatch\n", "    status: mismatch\n    max_rel_err: 1.0e-6\n")
    known = write(tmp_path, small)
    assert known.match(CASE, "torch", "cpu", rel_err=6e-8).id == "small"
    assert known.match(CASE, "torch", "cpu", rel_err=0.5) is None
    assert known.match(CASE, "torch", "cpu").id == "small"  # no value error (a crash, a refusal): as before
    known = write(tmp_path, small + ENTRY.format(backend="torch", cases="{op: conv_transpose1d}").replace("id: e", "id: any"))
    assert known.match(CASE, "torch", "cpu", rel_err=0.5).id == "any"


@pytest.mark.parametrize("value", ["-1", "0", "x", "true"])
def test_bad_max_rel_err_is_a_one_line_input_error(tmp_path, value):
    body = ENTRY.format(backend="torch", cases="{op: conv2d}").replace("    status: mismatch\n",
                                                                       f"    status: mismatch\n    max_rel_err: {value}\n")
    with pytest.raises(InputError) as err:
        write(tmp_path, body)
    assert str(err.value).endswith("max_rel_err: must be a number > 0") and ":6:" in str(err.value)  # issues: is line 1


def test_a_non_finite_output_is_beyond_every_max_rel_err(tmp_path):
    """One NaN among correctly rounded elements: the finite elements' rel_err is ~2^-25, yet the record's error size is
    infinite, so no max_rel_err entry explains it (the runner and the plugin both match on error_size)."""
    from harness.execution.records import Record
    from harness.numerics.compare import compare
    from harness.numerics.inputs import make_inputs
    from harness.numerics.oracle import reference

    inputs = make_inputs(CASE)
    ref, scale = reference(CASE, inputs.x, inputs.w, inputs.b)
    out = ref.astype(CASE.dtype)
    out.reshape(-1)[3] = np.nan
    verdict = compare(CASE, out, CASE.dtype, ref, scale)
    assert (verdict.status, verdict.nonfinite) == ("mismatch", 1) and verdict.rel_err < 1e-7
    rec = Record("x", "f.yaml", CASE.op, {}, "torch", "0", "cpu", CASE.dtype, verdict.status,
                 rel_err=verdict.rel_err, nonfinite=verdict.nonfinite)
    assert rec.error_size == float("inf")
    small = ENTRY.format(backend="torch", cases="{op: conv_transpose1d}").replace(
        "    status: mismatch\n", "    status: mismatch\n    max_rel_err: 1.0e-6\n")
    known = write(tmp_path, small)
    assert known.match(CASE, "torch", "cpu", rel_err=rec.error_size) is None
    assert known.match(CASE, "torch", "cpu", rel_err=verdict.rel_err) is not None  # the finite part alone fits


def test_an_invalid_case_is_matched_only_by_an_entry_that_predicts_an_invalid_outcome(tmp_path):
    """A refusal entry (rejected) cannot explain anything of an invalid case, whose refusal is its pass: it does
    not match it (no "now passes" noise), and the lookup goes on; an accepted_invalid entry does match it."""
    invalid = make_case(id="bad", op="conv1d", in_channels=2, out_channels=2, input_size=2, kernel_size=5,
                        expect="invalid", tags=["t"])
    body = ENTRY.format(backend="torch", cases="{op: conv1d}").replace("    status: mismatch\n", "    status: rejected\n")
    body += ENTRY.format(backend="torch", cases="{op: conv1d}").replace("id: e", "id: accepts").replace(
        "    status: mismatch\n", "    status: [accepted_invalid, pass]\n")
    known = write(tmp_path, body)
    assert known.match(invalid, "torch", "cpu").id == "accepts"
    valid = make_case(id="good", op="conv1d", in_channels=2, out_channels=2, input_size=7, kernel_size=3, tags=["t"])
    assert known.match(valid, "torch", "cpu").id == "e"


def test_a_failing_result_goes_to_the_first_entry_that_lists_its_status(tmp_path):
    """Two entries select the case: a drift entry (mismatch) first, a wrong-shape entry second. A shape_mismatch
    is the second's; a mismatch, a crash (listed by neither) and a pass (its "now passes" hint) are the first's."""
    body = (ENTRY.format(backend="torch", cases="{op: 'conv_transpose*'}").replace("id: e", "id: drift")
            + ENTRY.format(backend="torch", cases="{stride: 2}").replace("id: e", "id: shape")
            .replace("status: mismatch", "status: shape_mismatch"))
    known = write(tmp_path, body)
    got = {s: known.match(CASE, "torch", "cpu", status=s).id for s in ("shape_mismatch", "mismatch", "crash", "pass")}
    assert got == {"shape_mismatch": "shape", "mismatch": "drift", "crash": "drift", "pass": "drift"}
    assert known.match(CASE, "torch", "cpu").id == "drift"  # no status given: the first that selects it
