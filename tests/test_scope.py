"""`convdiff scope` end to end on a planted bug whose rule is known (tests/planted_bugs.py): the scope it
writes is that rule (agreeing with it on fresh configurations it never ran), loads as a known-issues file
and explains a fresh run; `--check` calls a too-broad selector too broad and corrects it. Seconds: the
target is PyTorch with a planted defect, on small cases."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from harness.commands.cli import main
from harness.commands.fuzz.gen import generate
from harness.judge.known_issues import load_known_issues
from harness.model.features import selector_names
from harness.model.predicate import compile_predicate, evaluate
from tests.planted_bugs import TRUTH

pytestmark = pytest.mark.xdist_group("test_scope")

PLANTED = "planted=tests.planted_bugs:PaddingScaledByDilation"
CASES = """\
cases:
  - id: c
    op: conv2d
    in_channels: 2
    out_channels: 3
    input_size: [7, 6]
    kernel_size: 3
    sweep:
      dilation: [1, 2, [2, 1], [1, 2]]
      padding: [0, 1, [[1, 0], [0, 1]], [[0, 1], [1, 0]], same]
  - id: t
    op: conv_transpose1d
    in_channels: 2
    out_channels: 2
    input_size: 5
    kernel_size: 3
    sweep:
      dilation: [1, 2, 3]
      padding: [0, 1, [[1, 0]], [[0, 2]]]
"""
# cases it never saw: inside the rule and out (one dim each way), for the run with the scope as known issues
FRESH = """\
cases:
  - {id: inside_conv, op: conv1d, in_channels: 1, out_channels: 2, input_size: 11, kernel_size: 2, dilation: 3, padding: [[2, 0]]}
  - {id: inside_3d, op: conv3d, in_channels: 1, out_channels: 1, input_size: [3, 6, 3], kernel_size: 2, dilation: [1, 2, 1], padding: [[0, 0], [1, 1], [0, 0]]}
  - {id: outside_after, op: conv1d, in_channels: 1, out_channels: 2, input_size: 11, kernel_size: 2, dilation: 3, padding: [[0, 2]]}
  - {id: outside_undilated, op: conv2d, in_channels: 2, out_channels: 2, input_size: 6, kernel_size: 3, padding: 1}
"""


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    d = tmp_path_factory.mktemp("scope")
    (d / "cases.yaml").write_text(CASES, encoding="utf-8")
    status = main(["scope", str(d / "cases.yaml"), "--backends", PLANTED, "--time", "25", "--seed", "3",
                   "--out", str(d / "out")])
    return d, status


def test_scope_writes_the_planted_rule(scoped: tuple[Path, int]) -> None:
    d, status = scoped
    assert status == 0
    known = load_known_issues(d / "out" / "scope.yaml")  # a known-issues file as it stands
    assert [e.backend for e in known.entries] == [["planted"]]
    entry = known.entries[0]
    assert {"shape_mismatch"} <= set(entry.status)
    truth = compile_predicate(TRUTH["PaddingScaledByDilation"])
    fresh = [c.case for c in itertools.islice(generate(77, invalid_rate=0.0), 300)]
    agree = sum(evaluate(truth, selector_names(c.params())) == entry.matches(c, "planted", "cpu") for c in fresh)
    assert agree / len(fresh) >= 0.95, entry.cases
    md = (d / "out" / "scope.md").read_text(encoding="utf-8")
    assert "Fails exactly when: dilation > 1 and pad before > 0 on one axis" in md
    assert "| pass | 0 |" in md  # no fresh case inside the rule passed


def test_the_scope_explains_a_fresh_run(scoped: tuple[Path, int]) -> None:
    d, _ = scoped
    (d / "fresh.yaml").write_text(FRESH, encoding="utf-8")
    status = main(["run", str(d / "fresh.yaml"), "--backends", PLANTED, "--known-issues", str(d / "out" / "scope.yaml"),
                   "--out", str(d / "fresh-run")])
    summary = json.loads((d / "fresh-run" / "summary.json").read_text(encoding="utf-8"))
    assert status == 0 and summary["unexpected"] == 0 and not summary["fixed_upstream"], summary["counts"]
    assert sum(summary["known_counts"].values()) == 2  # the two inside


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scope"]) == 2
    assert main(["scope", "--backends", "torch,jax"]) == 2
    assert main(["scope", "--check", "no-such-entry"]) == 2
    err = capsys.readouterr().err
    assert "one target at a time" in err and "no known issue no-such-entry" in err


def test_check_finds_an_entry_the_adapter_ships(tmp_path: Path) -> None:
    """An installed adapter's own known-issues file (Backend.known_issues_file: the ONNX reference example's)
    is read by --check as `convdiff run` reads it: its entries need no --known-issues."""
    from backends.registry import installed_backends

    if "onnx-reference" not in installed_backends():
        pytest.skip("the onnx-reference example adapter is not installed (make installs it)")
    entry = "onnx-reference-convtranspose-empty-output-accepted"
    status = main(["scope", "--check", entry, "--per-entry", "2", "--seed", "0", "--out", str(tmp_path / "out")])
    check = json.loads((tmp_path / "out" / "check.json").read_text(encoding="utf-8"))[0]
    assert status in (0, 1) and check["id"] == entry and check["targets"] == ["onnx-reference"], check
    assert check["inside"] >= 1


TOO_BROAD = """\
issues:
  - id: dilated-pads-every-conv1d
    backend: "mutant:padding_scaled_by_dilation"
    cases: {op: conv1d}
    status: mismatch
    reason: the pad before scaled by the dilation (but an undilated conv, or one with no pad before, is right)
    link: none
"""


def test_check_calls_a_too_broad_selector_too_broad(tmp_path: Path) -> None:
    (tmp_path / "ours.yaml").write_text(TOO_BROAD, encoding="utf-8")
    status = main(["scope", "--check", "dilated-pads-every-conv1d", "--known-issues", str(tmp_path / "ours.yaml"),
                   "--per-entry", "6", "--seed", "1", "--out", str(tmp_path / "out")])
    assert status == 1
    check = json.loads((tmp_path / "out" / "check.json").read_text(encoding="utf-8"))[0]
    # an undilated conv1d, or one without a pad before, is right: it passes inside; the corrected rule names the
    # dilation (on these fresh cases a dilated one always had a pad before)
    assert check["verdict"].startswith("too broad") and check["passes_inside"] >= 1 and check["fails_inside"] >= 1
    assert check["corrected_when"] and check["corrected_errors"] == 0, check


NEVER_SHOWN = """\
issues:
  - id: undilated-conv1d-sometimes
    backend: "mutant:padding_scaled_by_dilation"
    cases: {op: conv1d, when: "max(dilation) == 1"}
    status: [mismatch, pass]
    reason: an entry that lists pass, over cases the planted defect (pads scaled by the dilation) never touches
    link: none
"""


def test_check_says_not_shown_where_no_fresh_case_inside_failed(tmp_path: Path) -> None:
    """An entry that lists `pass` is not contradicted by passes inside, nor confirmed: with no failure inside the
    verdict is "not shown" (not "holds"), every pass inside is counted, and the command exits 0."""
    (tmp_path / "ours.yaml").write_text(NEVER_SHOWN, encoding="utf-8")
    status = main(["scope", "--check", "undilated-conv1d-sometimes", "--known-issues", str(tmp_path / "ours.yaml"),
                   "--per-entry", "6", "--seed", "1", "--out", str(tmp_path / "out")])
    check = json.loads((tmp_path / "out" / "check.json").read_text(encoding="utf-8"))[0]
    assert check["verdict"] == "not shown" and status == 0, check
    assert check["fails_inside"] == 0 and check["passes_inside"] == check["inside"] >= 1
    assert check["passes_inside_unlisted"] == 0


GLOB_AND_HOST = """\
issues:
  - id: on-torch-and-every-mutant
    backend: [torch, "mutant:*"]
    host: {torch_mkldnn_bf16: true}
    cases: {op: conv1d}
    status: mismatch
    reason: an entry naming its test-only targets by a pattern, with a host selector on a live fact
    link: none
"""


def test_check_targets_skip_patterns_and_a_target_that_did_not_start_is_not_run(tmp_path: Path) -> None:
    """`mutant:*` is a pattern over the mutants, not a backend to start; and an entry whose targets all failed to
    start (a loaded host: the setup timed out) has no live host facts, so it is "not run" (the command exits 1),
    never "not applicable"."""
    from harness.commands.scope.check import EntryCheck, judge_entry, targets_of

    (tmp_path / "ours.yaml").write_text(GLOB_AND_HOST, encoding="utf-8")
    entry = load_known_issues(tmp_path / "ours.yaml").entries[0]
    assert targets_of(entry, ["torch", "tensorflow"]) == ["torch"]
    check = EntryCheck(entry.id, ["torch"])
    judge_entry(entry, check, [], {}, {}, set(), {"torch-cpu": "worker did not start (worker stopped answering)"})
    assert check.verdict == "not run" and "worker stopped answering" in check.not_run and not check.applies
    assert check.as_dict()["not_run"] == check.not_run


BOTH_KINDS = """\
issues:
  - id: aborts-on-any-nhwc-conv1d
    backend: "mutant:padding_scaled_by_dilation"
    cases: {op: conv1d, layout: channels_last}
    status: crash
    reason: an abort on valid and invalid cases alike (no expect)
    link: none
  - id: accepts-any-invalid-conv1d
    backend: "mutant:padding_scaled_by_dilation"
    cases: {op: conv1d}
    status: accepted_invalid
    reason: only an invalid case can be accepted
    link: none
"""


def test_check_draws_both_kinds_for_a_crash_entry_without_expect(tmp_path: Path) -> None:
    """A crash entry with no `expect` selects valid and invalid cases alike: its check draws both (an
    accepted_invalid entry only invalid ones), each fresh case marked with the kind it is."""
    from harness.commands.scope.check import sample
    from harness.commands.scope.sample import Pool
    from harness.judge.known_issues import load_known_issues

    (tmp_path / "ours.yaml").write_text(BOTH_KINDS, encoding="utf-8")
    crash, accepts = load_known_issues(tmp_path / "ours.yaml").entries
    inside, outside = sample(crash, "mutant:padding_scaled_by_dilation", [], Pool(3), 8)
    assert {c.case.expect for c in inside} == {"valid", "invalid"}
    assert all(crash.matches(c.case, "mutant:padding_scaled_by_dilation", "cpu", None) for c in inside)
    assert outside and all(not crash.matches(c.case, "mutant:padding_scaled_by_dilation", "cpu", None) for c in outside)
    inside, _ = sample(accepts, "mutant:padding_scaled_by_dilation", [], Pool(3), 8)
    assert inside and {c.case.expect for c in inside} == {"invalid"}
