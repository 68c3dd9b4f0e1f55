"""Gradient plumbing: the case field, records per output, known-issue selectors, summary, pytest ids,
and the gradient mutants caught and named by their diagnosis."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness.commands.cli import main
from harness.execution.records import Record
from harness.judge.diagnosis_grad import diagnose_gradient
from harness.judge.known_issues import load_known_issues
from harness.judge.summary import summarize
from harness.model.build import make_case
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle_grad import gradient_reference, unreached

from .helpers import run_on, run_pytest

SEED = dict(op="conv2d", in_channels=2, out_channels=2, input_size=[5, 3], kernel_size=2, stride=[2, 1],
            padding=1, gradients=True)


def test_gradients_field_in_defaults_and_outputs(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("defaults: {gradients: true}\ncases:\n  - {id: a, op: conv1d, in_channels: 1, out_channels: 1,"
                 " input_size: 4, kernel_size: 2, bias: true}\n  - {id: b, op: conv1d, in_channels: 1,"
                 " out_channels: 1, input_size: 4, kernel_size: 2, gradients: false}\n")
    from harness.model.loader import load_file

    a, b = load_file(f)
    assert a.gradient_outputs == ("grad_input", "grad_weight", "grad_bias") and b.gradient_outputs == ()
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - {id: a, op: conv1d, in_channels: 1, out_channels: 1, input_size: 4,"
                   " kernel_size: 2, gradients: 3}\n")
    assert main(["validate", str(bad)]) == 2


def test_old_records_read_as_forward():
    line = json.dumps({"case_id": "a", "file": "f.yaml", "op": "conv1d", "params": {}, "backend": "torch",
                       "backend_version": "1", "device": "cpu", "dtype": "float32", "status": "pass"})
    assert Record.from_json(line).output == "out"


def test_known_issue_output_selector(tmp_path):
    path = tmp_path / "known_issues.yaml"
    path.write_text("issues:\n"
                    "  - {id: fwd, backend: torch, cases: {op: conv2d}, status: mismatch, reason: r, link: l}\n"
                    "  - {id: bwd, backend: torch, cases: {op: conv2d, output: 'grad_*'}, status: rejected,"
                    " reason: r, link: l}\n")
    known = load_known_issues(path)
    case = make_case(id="k", **SEED)
    assert known.match(case, "torch", "cpu").id == "fwd"
    assert known.match(case, "torch", "cpu", None, "grad_weight").id == "bwd"
    assert not known.stale([case], ["torch"])


def test_summary_counts_per_output():
    recs = [Record(case_id="a", file="f", op="conv2d", params={}, backend="torch", backend_version="1", device="cpu",
                   dtype="float32", status=s, output=o)
            for o, s in (("out", "pass"), ("grad_input", "mismatch"), ("grad_weight", "pass"))]
    s = summarize(recs)
    assert s["counts_by_output"]["torch-cpu"] == {"grad_input": {"mismatch": 1}, "grad_weight": {"pass": 1},
                                                  "out": {"pass": 1}}
    assert s["findings"][0]["output"] == "grad_input"


def test_run_gradients_flag_writes_one_record_per_output(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("cases:\n  - {id: c, op: conv_transpose1d, in_channels: 2, out_channels: 4, groups: 2,"
                 " input_size: 5, kernel_size: 3, stride: 2, output_padding: 1, bias: true}\n")
    assert main(["run", str(f), "--backends", "torch", "--gradients", "--out", str(tmp_path / "o")]) == 0
    recs = [json.loads(ln) for ln in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    assert [(r["output"], r["status"]) for r in recs] == [
        ("out", "pass"), ("grad_input", "pass"), ("grad_weight", "pass"), ("grad_bias", "pass")]
    junit = (tmp_path / "o" / "junit.xml").read_text()
    assert 'name="c[grad_weight]"' in junit and 'name="c"' in junit


def test_pytest_ids_end_in_the_gradient(pytester):
    pytester.mkdir("cases")
    pytester.makeini("[pytest]\nconvdiff_cases = cases\n")
    pytester.path.joinpath("cases", "g.yaml").write_text(
        "cases:\n  - {id: g, op: conv1d, in_channels: 1, out_channels: 1, input_size: 4, kernel_size: 2,"
        " gradients: true}\n  - {id: f, op: conv1d, in_channels: 1, out_channels: 1, input_size: 4,"
        " kernel_size: 2}\n")
    out = run_pytest(pytester, "cases", "--convdiff-backends", "torch", "--collect-only", "-q").stdout.str()
    for node in ("g.yaml::g[torch-cpu]", "g.yaml::g[torch-cpu-grad_input]", "g.yaml::g[torch-cpu-grad_weight]",
                 "g.yaml::f[torch-cpu]"):
        assert node in out
    assert "grad_bias" not in out and "f[torch-cpu-grad" not in out
    forced = run_pytest(pytester, "cases", "--convdiff-backends", "torch", "--convdiff-gradients", "-q").stdout.str()
    assert "6 passed" in forced, forced  # both cases: out, grad_input, grad_weight


# ---- diagnosis on hand-made wrong gradients (no framework) -------------------------------
def _wrong(case, name, change):
    inputs = make_inputs(case)
    ref = gradient_reference(case, inputs)
    out = change(ref[name][0].copy())
    return diagnose_gradient(case, inputs, name, out, ref[name])


def test_zero_fill_and_ignored_output_padding_are_named():
    case = make_case(id="z", **SEED)
    assert unreached(case) == (1, 0)

    def zero_last_row(a):
        a[:, :, -1] = 0
        return a

    assert _wrong(case, "grad_input", zero_last_row) == "grad_input_zero_fill_output_padding"
    assert _wrong(case, "grad_input", lambda a: a[:, :, :-1]) == "grad_input_ignore_output_padding"
    assert _wrong(case, "grad_input", lambda a: a) is None
    assert _wrong(case, "grad_weight", lambda a: a + 1.0) is None


# ---- the mutants through real torch workers ----------------------------------------------------
GROUPED = dict(op="conv2d", batch=2, in_channels=4, out_channels=8, groups=2, input_size=[6, 5], kernel_size=3,
               gradients=True, bias=True)


@pytest.mark.parametrize("bug, fields", [
    ("grad_input_zero_fill_output_padding", SEED),
    ("grad_input_ignore_output_padding", SEED),
    ("grad_input_transposed_weight_layout", GROUPED),
    ("grad_input_unflipped_kernel", GROUPED),
])
def test_gradient_mutant_is_caught_and_named(bug, fields):
    case = make_case(id="m", **fields)
    recs = run_on([case, dataclasses.replace(case, id="plain", gradients=False)], [f"mutant:{bug}"])
    by = {(r.case_id, r.output): r for r in recs}
    assert by[("m", "out")].status == "pass" and by[("plain", "out")].status == "pass"
    dx = by[("m", "grad_input")]
    assert dx.status in ("mismatch", "shape_mismatch") and dx.diagnosis == bug, (dx.status, dx.diagnosis, dx.message)
    assert f"mutant:{bug}" in dx.translation
    assert by[("m", "grad_weight")].status == "pass"


def test_inherited_status_when_the_forward_fails():
    """A forward that never ran gives each gradient of an adapter that differentiates its status, marked as not
    having run; an adapter with no gradient path (fault:exception) gives `unsupported` gradients instead."""
    from backends.testing.mutants import MutantBackend
    from harness.execution.grad_exec import execute_gradients

    case = make_case(id="i", **SEED)
    refused = {"status": "rejected", "message": "injected refusal", "origin": "framework"}
    grads = execute_gradients(MutantBackend("grad_input_unflipped_kernel"), case, make_inputs(case), "cpu", refused)
    assert set(grads) == {"grad_input", "grad_weight"}
    for sub in grads.values():
        assert sub["status"] == "rejected" and sub["inherited"] and sub["message"].startswith("forward rejected")
    recs = run_on([case], ["fault:exception"])
    assert {r.output for r in recs} == {"out", "grad_input", "grad_weight"}
    for r in recs:
        assert r.status == ("error" if r.output == "out" else "unsupported"), (r.output, r.status, r.message)


def test_minimize_keeps_a_gradient_failure(tmp_path):
    """`minimize --output grad_input` shrinks while the gradient's status and diagnosis persist."""
    from harness.commands.minimize import case_size, minimize, write_outputs
    from harness.model.loader import load_file

    big = make_case(id="big", **{**SEED, "batch": 2, "in_channels": 3, "out_channels": 4, "input_size": [9, 5]})
    result = minimize(big, "mutant:grad_input_zero_fill_output_padding", output="grad_input", timeout=60.0)
    assert result.record.output == "grad_input" and result.record.status == "mismatch"
    assert result.record.diagnosis == "grad_input_zero_fill_output_padding"
    assert case_size(result.case) < case_size(big)
    (case,) = load_file(write_outputs(result, tmp_path)[0])
    assert case.gradients and case_size(case) == case_size(result.case)


def test_torch_gradient_reproducers_agree_with_the_harness(tmp_path):
    """`convdiff repro --output grad_*` scripts (torch): same verdict, error and ratio as the records."""
    from reports.repro.script import script_for

    from .helpers import assert_script_verdict, run_scripts

    cases = [make_case(id="r1", **{**SEED, "bias": True, "layout": "channels_last"}),
             make_case(id="r2", **{**GROUPED, "op": "conv_transpose2d", "stride": 2, "output_padding": 1,
                                   "padding": [[1, 0], [0, 2]], "out_channels": 6})]
    recs = [r for r in run_on(cases, ["torch"]) if r.output != "out"]
    assert len(recs) == 6 and all(r.status == "pass" for r in recs)
    for rec, (rc, out) in zip(recs, run_scripts(recs, [script_for(r) for r in recs], tmp_path)):
        assert_script_verdict(rec, rc, out, f"{rec.case_id} {rec.output}: {out[-600:]}")


# (case id, backend) -> the gradient whose script is run: the TF/Keras layout fallback (x rebound inside
# the tape), the Keras kernel's filter layout, Paddle's SAME + dilation gradients, JAX's vjp.
FRAMEWORK_PICKS = {("t2d_nc", "tensorflow"): "grad_input", ("t2d_nc", "tensorflow-keras"): "grad_weight",
                   ("t2d_nc", "paddle"): "grad_bias", ("t2d_nc", "jax"): "grad_weight",
                   ("same_dil", "tensorflow"): "grad_weight", ("same_dil", "paddle"): "grad_input",
                   ("t2d_nc", "paddle-output-size"): "grad_weight", ("same_dil", "jax"): "grad_input"}


def test_framework_gradient_reproducers_agree_with_the_harness(tmp_path):
    """`convdiff repro --output grad_*` for TensorFlow, Keras, Paddle and JAX: each script, run alone, gives
    the harness's verdict, error and ratio; a rejected record without a translation gets no script."""
    from reports.repro.script import ReproUnavailable, script_for

    from .helpers import assert_script_verdict, run_scripts

    cases = [make_case(id="t2d_nc", op="conv_transpose2d", in_channels=2, out_channels=3, input_size=[3, 4],
                       kernel_size=2, stride=[2, 1], padding=1, output_padding=[1, 0], bias=True, gradients=True),
             make_case(id="same_dil", op="conv2d", in_channels=2, out_channels=4, input_size=[7, 6], kernel_size=3,
                       dilation=2, padding="same", layout="channels_last", bias=True, gradients=True)]
    backends = sorted({b for _, b in FRAMEWORK_PICKS})
    everything = run_on(cases, backends)
    recs = [r for r in everything if FRAMEWORK_PICKS.get((r.case_id, r.backend)) == r.output]
    assert len(recs) == len(FRAMEWORK_PICKS)
    runnable = []
    with pytest.raises(ReproUnavailable, match="unsupported"):  # paddle-output-size has no forward conv
        script_for(next(r for r in everything if (r.case_id, r.backend, r.output)
                        == ("same_dil", "paddle-output-size", "grad_weight")))
    for rec in recs:
        if rec.status == "rejected" and not rec.translation.strip():
            with pytest.raises(ReproUnavailable, match="no translation"):
                script_for(rec)
        else:
            runnable.append(rec)
    scripts = [script_for(r) for r in runnable]
    for rec, (rc, out) in zip(runnable, run_scripts(runnable, scripts, tmp_path)):
        assert_script_verdict(rec, rc, out, f"{rec.case_id} {rec.backend} {rec.output}: {rec.status} "
                                            f"({rec.message}); script:\n{out[-800:]}")
