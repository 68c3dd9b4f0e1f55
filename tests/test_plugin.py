"""The pytest plugin: ids, tiers, known issues as xfail, skips with reasons, failures with their call."""

from __future__ import annotations

import re

import pytest

from tests.helpers import run_pytest

CASES = """\
defaults:
  op: conv2d
  in_channels: 2
  out_channels: 2
  input_size: 5
  kernel_size: 3
cases:
  - id: smoke_one
    tier: smoke
  - id: swept
    sweep:
      stride: [1, 2]
  - id: nan_known
    tier: smoke
    tags: [naughty]
"""

KNOWN = """\
issues:
  - id: nan_backend_nan
    backend: "fault:nan"
    cases: {tags: naughty}
    status: mismatch
    reason: the nan fault backend returns NaN
    link: https://example.invalid/issue/1
  - id: typo_entry
    backend: torch
    cases: {op: conv9d}
    status: mismatch
    reason: matches nothing
    link: none
"""


@pytest.fixture
def corpus(pytester):
    pytester.mkdir("cases")
    pytester.path.joinpath("cases", "conv2d.yaml").write_text(CASES)
    pytester.path.joinpath("cases", "known_issues.yaml").write_text(KNOWN)
    pytester.makeini("[pytest]\nconvdiff_cases = cases\n")  # a project declares where its cases are
    return pytester


def test_ids_and_tiers(corpus):
    result = run_pytest(corpus, "cases", "--convdiff-backends", "torch", "--convdiff-tier", "full", "--collect-only", "-q")
    out = result.stdout.str()
    for node in ("cases/conv2d.yaml::smoke_one[torch-cpu]", "cases/conv2d.yaml::swept[stride=1][torch-cpu]",
                 "cases/conv2d.yaml::swept[stride=2][torch-cpu]"):
        assert node in out
    smoke = run_pytest(corpus, "cases", "--convdiff-backends", "torch", "--convdiff-tier", "smoke", "--collect-only", "-q")
    assert "swept" not in smoke.stdout.str() and "2 tests collected" in smoke.stdout.str()


def test_known_issue_is_xfail_with_link_and_others_fail(corpus):
    result = run_pytest(corpus, "cases", "--convdiff-backends", "torch,fault:nan", "--convdiff-tier", "smoke", "-rxX")
    result.assert_outcomes(passed=2, failed=1, xfailed=1)
    out = result.stdout.str()
    assert "https://example.invalid/issue/1" in out
    assert "mismatch: 1 non-finite output element(s) (NaN)" in out  # the un-known one fails with its story
    assert "warning: known issue 'typo_entry' (cases/known_issues.yaml) matches no case" in out


def test_unavailable_device_is_a_skip_with_reason(corpus):
    result = run_pytest(corpus, "cases", "--convdiff-backends", "torch", "--convdiff-device", "cuda", "--convdiff-tier", "smoke", "-rs")
    result.assert_outcomes(skipped=2)
    assert "no CUDA device" in result.stdout.str()


def test_bad_case_file_is_one_line_collection_error(pytester):
    pytester.mkdir("cases")
    pytester.makeini("[pytest]\nconvdiff_cases = cases\n")
    pytester.path.joinpath("cases", "bad.yaml").write_text("cases:\n  - id: a\n    op: conv9d\n")
    result = run_pytest(pytester, "cases", "--convdiff-backends", "torch")
    assert result.ret != 0
    assert "cases/bad.yaml:3: op: must be one of" in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def shared_dir_test(corpus) -> None:
    """A test for the nested xdist session: it keeps the outer session's shared directory (its processes fork from
    the templates that session runs: harness/execution/shared.py), or, started outside any, makes its own."""
    import os

    from harness.execution import shared

    outer = shared.inherited()
    corpus.mkdir("tests")
    corpus.path.joinpath("tests", "test_shared_dir.py").write_text(
        "import os\n\n\ndef test_shared_dir():\n"
        f"    got = os.environ.get({shared.SHARED_ENV!r}, '')\n"
        + (f"    assert got == {str(outer)!r}\n" if outer else f"    assert got.startswith({os.path.join('/tmp', 'convdiff-shared-')!r})\n"))


def test_loadgroup_runs_each_target_on_one_process(corpus, monkeypatch, tmp_path):
    """`make test`'s --dist loadgroup: all of a target's items on one xdist process, so its framework
    is imported once (a pytest/pytest-xdist pair that drops the group, pytest-xdist#1386, fails here), and
    that process's batched build (Backend.prepare) gets every case of the target: each torch-onnx-ort model is
    cut out of a batched export. xdist's worker processes read `dist` as "no" (the flag lives on as
    option.loadgroup); a plugin that read only `dist` gave each process half the cases to build ahead, and
    the rest exported one by one. Under xdist too, a nested session keeps the outer one's shared directory
    (shared_dir_test)."""
    from backends.onnx.torch_onnx_ort import TorchOnnxOrtBackend

    onnx = not TorchOnnxOrtBackend().unavailable_reason() and __import__("importlib").util.find_spec("onnxruntime")
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path / "cache"))
    corpus.path.joinpath("cases", "conv2d.yaml").write_text(CASES.replace("stride: [1, 2]", "stride: [1, 2, 3]"))
    backends = "torch,fault:nan" + (",torch-onnx-ort" if onnx else "")
    shared_dir_test(corpus)
    result = run_pytest(corpus, "cases", "tests", "--convdiff-backends", backends, "--convdiff-tier", "full", "-n", "2",
                                         "-p", "xdist", "--dist", "loadgroup", "-v")
    assert re.search(r"PASSED tests/test_shared_dir.py::test_shared_dir", result.stdout.str()), result.stdout.str()[-3000:]
    ran: dict[str, set[str]] = {}
    for line in result.stdout.lines:  # "[gw0] [ 10%] PASSED cases/conv2d.yaml::smoke_one[torch-cpu]@torch-cpu"
        m = re.match(r"\[(gw\d+)\] .*::\S*\[([^\]]+)\]@", line)
        if m:
            ran.setdefault(m.group(2), set()).add(m.group(1))
    want = {"torch-cpu", "fault:nan-cpu"} | ({"torch-onnx-ort-cpu"} if onnx else set())
    assert set(ran) == want and all(len(v) == 1 for v in ran.values()), ran
    assert "@torch-cpu" in result.stdout.str()  # the group xdist schedules by, in the node id
    if onnx:  # five cases: every model from the batched export
        entries = [p for p in (tmp_path / "cache" / "torch-onnx").iterdir() if p.is_dir()]
        assert len(entries) == 5 and all((p / "batched.txt").exists() for p in entries), sorted(
            (p.name, sorted(f.name for f in p.iterdir())) for p in entries)


@pytest.mark.parametrize("this_host", [True, False])
def test_host_selected_known_issue_is_decided_by_the_live_host(corpus, this_host):
    """An entry for another host leaves the failure a failure; one for this host makes it xfail."""
    import platform

    machine = platform.machine() if this_host else "not-" + platform.machine()
    known = KNOWN.replace("    cases: {tags: naughty}\n", f"    host: {{machine: '{machine}'}}\n    cases: {{tags: naughty}}\n")
    corpus.path.joinpath("cases", "known_issues.yaml").write_text(known)
    result = run_pytest(corpus, "cases", "--convdiff-backends", "fault:nan", "--convdiff-tier", "smoke", "-rxX")
    # fault:nan fails smoke_one (no entry) either way; nan_known is the case the entry names
    if this_host:
        result.assert_outcomes(failed=1, xfailed=1)
    else:
        result.assert_outcomes(failed=2)


def test_max_rel_err_entry_leaves_a_gross_mismatch_failing(corpus):
    """One entry, max_rel_err 0.05, for two mutants on smoke_one: float16 accumulation (rel_err ~1e-3) is
    its xfail, the flipped kernel (rel_err ~1) is a failure: the entry does not hide an error it cannot explain."""
    known = KNOWN + ("  - id: small_error\n    backend: 'mutant:*'\n    cases: {case: smoke_one}\n    status: mismatch\n"
                     "    max_rel_err: 0.05\n    reason: float16 accumulation\n    link: none\n")
    corpus.path.joinpath("cases", "known_issues.yaml").write_text(known)
    result = run_pytest(corpus, "cases", "--convdiff-backends", "mutant:low_precision_accumulation,mutant:flip_kernel",
                                         "--convdiff-tier", "smoke", "-k", "smoke_one", "-rxX")
    result.assert_outcomes(failed=1, xfailed=1)
    out = result.stdout.str()
    assert "smoke_one on mutant:flip_kernel-cpu" in out and "XFAIL cases/conv2d.yaml::smoke_one[mutant:low_prec" in out


def test_max_rel_err_entry_never_explains_a_non_finite_output(corpus):
    """fault:nan sets one element to NaN and leaves the rest exact, so the finite elements' rel_err is 0:
    an entry with any max_rel_err must still not explain it (a NaN is infinitely far from the bound). Without
    max_rel_err the same entry makes nan_known an xfail (test_host_selected_known_issue_is_decided_by_the_live_host)."""
    known = KNOWN.replace("    cases: {tags: naughty}\n", "    cases: {tags: naughty}\n    max_rel_err: 10.0\n")
    corpus.path.joinpath("cases", "known_issues.yaml").write_text(known)
    result = run_pytest(corpus, "cases", "--convdiff-backends", "fault:nan", "--convdiff-tier", "smoke", "-rxX")
    result.assert_outcomes(failed=2)


def test_loadgroup_orders_the_largest_units_first(corpus):
    """Under --dist loadgroup xdist hands out groups in the order of their first items: the targets that
    build a model per case, then the other targets, then the tests as collected (harness/commands/plugin.py
    pytest_collection_modifyitems). Without loadgroup, items stay as collected (tests first, as named)."""
    corpus.mkdir("tests")
    corpus.path.joinpath("tests", "test_a_plain.py").write_text("def test_plain():\n    pass\n")
    corpus.path.joinpath("tests", "test_b_grouped.py").write_text(
        "import pytest\n\npytestmark = pytest.mark.xdist_group('b')\n\n\ndef test_grouped():\n    pass\n")
    args = ("tests", "cases", "--convdiff-backends", "torch,tvm", "--convdiff-tier", "smoke", "--collect-only", "-q",
            "--convdiff-compiled-smoke", "all")  # every smoke item (the cover would leave smoke_one out on tvm)
    grouped = [ln for ln in run_pytest(corpus, *args, "-p", "xdist", "--dist", "loadgroup").stdout.lines
               if "::" in ln]
    assert grouped == ["cases/conv2d.yaml::smoke_one[tvm-cpu]", "cases/conv2d.yaml::nan_known[tvm-cpu]",
                       "cases/conv2d.yaml::smoke_one[torch-cpu]", "cases/conv2d.yaml::nan_known[torch-cpu]",
                       "tests/test_a_plain.py::test_plain", "tests/test_b_grouped.py::test_grouped"], grouped
    plain = [ln for ln in run_pytest(corpus, *args).stdout.lines if "::" in ln]
    assert plain[:2] == ["tests/test_a_plain.py::test_plain", "tests/test_b_grouped.py::test_grouped"], plain
    assert sorted(plain) == sorted(grouped)


def test_an_xdist_session_with_unreported_items_fails():
    """The xdist controller fails the session when fewer items reported than were collected (a loss
    that would otherwise pass green), and leaves a complete or a worker process's session alone."""
    from types import SimpleNamespace

    from harness.commands import plugin
    from harness.commands.plugin_items import STATE

    def session(workerinput=None):
        option = SimpleNamespace(collectonly=False)
        stash = pytest.Stash()
        stash[STATE] = object()  # a run that collected convdiff items (a foreign project's run is left alone)
        config = SimpleNamespace(option=option, getoption=lambda name, default=None: 2, stash=stash,
                                 pluginmanager=SimpleNamespace(get_plugin=lambda name: None))
        if workerinput is not None:
            config.workerinput = workerinput
        return SimpleNamespace(config=config, testscollected=3, shouldstop=False, exitstatus=0)

    plugin.REPORTED.clear()
    plugin.REPORTED.update({"a", "b"})
    lost, worker = session(), session(workerinput={})
    plugin.pytest_sessionfinish(lost, 0)
    plugin.pytest_sessionfinish(worker, 0)
    assert lost.exitstatus == pytest.ExitCode.TESTS_FAILED and worker.exitstatus == 0
    plugin.REPORTED.add("c")
    whole = session()
    plugin.pytest_sessionfinish(whole, 0)
    assert whole.exitstatus == 0
    plugin.REPORTED.clear()
