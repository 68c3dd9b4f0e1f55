"""What a user of an adapter of their own meets after the first run: the commands that convdiff prints must
run where they are printed, and a bad input or a broken target reads as one line.

The adapter is tests/test_plugin_backends.py's (torch with the kernel flipped on purpose), in a temporary
directory outside convdiff's tree, named on the command line as `flipped=myflip:FlippedTorch`.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from backends.registry import PLUGINS_ENV, cli_name
from tests.helpers import run_named_scripts, run_pytest
from tests.test_plugin_backends import ADAPTER, CASES, convdiff

pytestmark = pytest.mark.xdist_group("test_plugin_backends")

SETUP_RAISES = '''
from backends.base import Backend


class Unbuildable(Backend):
    framework = "numpy"
    devices = ("cpu",)

    def setup(self, device):
        raise RuntimeError("libconv.so: cannot open shared object file\\nsecond line")
'''

BAD_KNOWN = """\
issues:
  - id: ours
    backend: flipped
    cases: {groupz: 2}
    status: mismatch
    reason: r
    link: none
"""


def test_cli_name_spells_a_one_off_adapter_for_another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PLUGINS_ENV, "flipped=myflip:FlippedTorch;myflip:Other=myflip:Other")
    assert cli_name("flipped") == "flipped=myflip:FlippedTorch"
    assert cli_name("myflip:Other") == "myflip:Other"  # named by its spec: the spec alone resolves it
    assert cli_name("torch") == "torch"


def test_the_repro_line_of_a_pytest_failure_runs_as_printed(pytester: pytest.Pytester) -> None:
    """A case file under tests/conv_cases (not ./cases) and a one-off adapter: the printed command names
    both, reproduces the failure, and the failure names its diagnosis."""
    pytester.path.joinpath("myflip.py").write_text(ADAPTER)
    pytester.mkdir("tests")
    pytester.mkdir("tests/conv_cases")
    pytester.path.joinpath("tests", "conv_cases", "c.yaml").write_text(CASES)
    pytester.makeini("[pytest]\nconvdiff_cases = tests/conv_cases\n")
    result = run_pytest(pytester, "--convdiff-backends", "flipped=myflip:FlippedTorch")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "diagnosis flip_kernel" in out
    line = next(ln for ln in result.stdout.lines if ln.startswith("repro: "))
    assert "--backend flipped=myflip:FlippedTorch" in line and "--cases tests/conv_cases/c.yaml" in line
    args = re.findall(r"'[^']*'|\S+", line.removeprefix("repro: convdiff "))
    proc = convdiff(pytester.path, *(a.strip("'") for a in args))
    assert proc.returncode == 0, proc.stderr
    assert "mismatch" in proc.stderr and "ADAPTER = load_class('myflip:FlippedTorch')" in proc.stdout
    # the generic plugin script, run alone as a user would (forked from an interpreter that has torch): its verdict
    [(code, output)] = run_named_scripts([("repro", proc.stdout)], pytester.path)
    assert code == 1 and "verdict: mismatch" in output, output[-3000:]


def test_the_junit_repro_line_runs_as_printed(tmp_path: Path) -> None:
    (tmp_path / "myflip.py").write_text(ADAPTER)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "c.yaml").write_text(CASES)
    proc = convdiff(tmp_path, "run", "elsewhere", "--backends", "flipped=myflip:FlippedTorch", "--out", "o")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failure = ET.parse(tmp_path / "o" / "junit.xml").getroot().find(".//failure")
    assert failure is not None and failure.text is not None
    line = next(ln for ln in failure.text.splitlines() if ln.startswith("repro: "))
    args = re.findall(r"'[^']*'|\S+", line.removeprefix("repro: convdiff "))
    repro = convdiff(tmp_path, *(a.strip("'") for a in args))
    assert repro.returncode == 0, repro.stderr
    assert "c.yaml::flip on flipped-cpu: mismatch" in repro.stderr


def test_a_bad_known_issues_file_under_pytest_is_one_line(pytester: pytest.Pytester) -> None:
    """Was: INTERNALERROR, a TypeError from the case file's repr_failure (a Collector's takes no style)."""
    pytester.mkdir("mycases")
    pytester.path.joinpath("mycases", "c.yaml").write_text(CASES)
    pytester.path.joinpath("ours.yaml").write_text(BAD_KNOWN)
    pytester.makeini("[pytest]\nconvdiff_cases = mycases\n")
    result = run_pytest(pytester, "mycases", "--convdiff-backends", "torch", "--convdiff-known-issues", "ours.yaml")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out
    assert "ours.yaml:4: cases.groupz: unknown selector field" in out
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_a_target_whose_setup_raises_is_a_one_line_error_under_pytest(pytester: pytest.Pytester) -> None:
    """Was: each error printed pytest's own traceback through runner.py, and the summary line a module path."""
    pytester.path.joinpath("unbuildable.py").write_text(SETUP_RAISES)
    pytester.mkdir("mycases")
    pytester.path.joinpath("mycases", "c.yaml").write_text(CASES)
    pytester.makeini("[pytest]\nconvdiff_cases = mycases\n")
    result = run_pytest(pytester, "mycases", "--convdiff-backends", "ub=unbuildable:Unbuildable", "-rE")
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert "ub-cpu is installed but broken: setup failed: RuntimeError: libconv.so: cannot open" in out
    assert "second line" not in out and "runner.py" not in out and "def from_call" not in out
    assert "ERROR mycases/c.yaml::flip[ub-cpu] - BrokenTarget: ub-cpu" in out  # (cut to the terminal width)


def test_commands_outside_a_checkout_default_to_convdiffs_corpus(tmp_path: Path) -> None:
    """`convdiff selftest`, `repro`, `minimize` and `run` with no case paths, run from a user's own project:
    they read convdiff's corpus, not a ./cases that is not there (was: `cases:0: file: no such file`)."""
    corpus = Path(__file__).resolve().parents[1] / "cases"
    proc = convdiff(tmp_path, "repro", "conv2d.yaml::no_such_case", "--backend", "torch")
    assert proc.returncode == 2
    assert f"no case 'conv2d.yaml::no_such_case' in {corpus}" in proc.stderr, proc.stderr


def test_a_name_two_distributions_register_goes_to_convdiffs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: the first entry point found on sys.path won, so a plugin registering `torch` replaced convdiff's
    torch silently, or not, depending on the order of sys.path."""
    from types import SimpleNamespace

    from backends import registry

    def ep(name: str, value: str, dist: str) -> SimpleNamespace:
        return SimpleNamespace(name=name, value=value, dist=SimpleNamespace(metadata={"Name": dist}, version="1"))

    eps = [ep("torch", "myflip:FlippedTorch", "aaa-plugin"), ep("torch", "backends.torch.eager:TorchBackend", "convdiff"),
           ep("flipped", "myflip:FlippedTorch", "zzz-plugin"), ep("flipped", "other:Flipped", "bbb-plugin")]
    monkeypatch.setattr(registry.importlib.metadata, "entry_points", lambda group: eps)
    registry._installed.cache_clear()
    try:
        found = registry.registered()
        assert (found["torch"].source, found["torch"].spec) == ("convdiff", "backends.torch.eager:TorchBackend")
        assert found["flipped"].source == "bbb-plugin"  # by distribution name, not by position on sys.path
        lines = registry.clashes()
        assert any("'torch'" in ln and "aaa-plugin (myflip:FlippedTorch)" in ln and "convdiff's is used" in ln
                   for ln in lines)
        assert any("'flipped'" in ln and "bbb-plugin's is used" in ln for ln in lines)
    finally:
        monkeypatch.undo()
        registry._installed.cache_clear()


def test_an_adapter_module_that_raises_on_import_is_one_line(tmp_path: Path) -> None:
    """require_api(2) against this convdiff's API 1, or any exception at import: a usage error naming the
    module and the cause (was: a traceback and exit 1, an INTERNALERROR under pytest)."""
    (tmp_path / "oldapi.py").write_text("from backends.base import require_api\n\nrequire_api(2)\n")
    (tmp_path / "c.yaml").write_text(CASES)
    proc = convdiff(tmp_path, "run", "c.yaml", "--backends", "oldapi:Adapter", "--out", "o")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "cannot import 'oldapi' for backend oldapi:Adapter: ImportError: this adapter needs convdiff's adapter API 2.0" \
        in proc.stderr


def test_an_xfail_names_the_known_issues_file_that_explains_it(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("myflip.py").write_text(ADAPTER)
    pytester.mkdir("mycases")
    pytester.path.joinpath("mycases", "c.yaml").write_text(CASES)
    pytester.path.joinpath("ours.yaml").write_text(BAD_KNOWN.replace("{groupz: 2}", "{case: flip}"))
    pytester.makeini("[pytest]\nconvdiff_cases = mycases\n")
    result = run_pytest(pytester, "mycases", "--convdiff-backends", "flipped=myflip:FlippedTorch",
                        "--convdiff-known-issues", "ours.yaml", "-rx")
    result.assert_outcomes(passed=1, xfailed=1)
    assert "XFAIL mycases/c.yaml::flip[flipped-cpu] - ours: r (none; ours.yaml)" in result.stdout.str()


def test_an_adapters_known_issues_file_that_is_missing_is_named(tmp_path: Path) -> None:
    """Backend.known_issues_file names a file that was not packaged: was silently ignored, so every divergence
    it documents came back unexpected with nothing saying why."""
    (tmp_path / "myflip.py").write_text(ADAPTER.replace('    devices = ("cpu",)\n',
                                                        '    devices = ("cpu",)\n    known_issues_file = "ours.yaml"\n'))
    (tmp_path / "c.yaml").write_text(CASES)
    proc = convdiff(tmp_path, "run", "c.yaml", "--backends", "flipped=myflip:FlippedTorch", "--out", "o")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{tmp_path / 'ours.yaml'}:0: known_issues_file: no such file" in proc.stderr


def test_a_name_clash_with_convdiffs_backend_says_how_to_name_yours(tmp_path: Path) -> None:
    (tmp_path / "myflip.py").write_text(ADAPTER)
    (tmp_path / "c.yaml").write_text(CASES)
    proc = convdiff(tmp_path, "run", "c.yaml", "--backends", "torch=myflip:FlippedTorch", "--out", "o")
    assert proc.returncode == 2
    assert "backend name 'torch' is already registered by convdiff" in proc.stderr
    assert "NAME=myflip:FlippedTorch" in proc.stderr


def test_the_status_table_keeps_known_and_unexpected_under_their_headers() -> None:
    """Was: the bar and the known count shared one right-justified cell, so a count stood under the bar's
    column and the bar moved from row to row."""
    from harness.judge.summary import format_table

    summary = {"counts": {"mine-cpu": {"pass": 5, "unsupported": 2}, "torch-cpu": {"mismatch": 3}},
               "known_counts": {"torch-cpu": 1}, "unexpected_results": [{"backend": "torch", "device": "cpu"}] * 2,
               "total": 10, "unexpected": 2, "fixed_upstream": [], "stale_known_issues": []}
    head, rule, mine, torch, _ = format_table(summary).splitlines()
    assert {ln.index("|") for ln in (head, rule, mine, torch)} == {head.index("|")}
    assert torch[head.index("known"):head.index("known") + len("known")].strip() == "1"
    assert torch.endswith("2") and mine.endswith("|")


def test_an_installed_plugin_that_cannot_import_is_a_broken_target(tmp_path: Path) -> None:
    """An installed distribution's adapter written for another contract (require_api(2)): the run fails naming
    it (exit 1) and the other targets still run (was: a usage error, or a traceback, that stopped them all)."""
    site = tmp_path / "site"
    (site / "oldplug-0.1.dist-info").mkdir(parents=True)
    (site / "oldplug.py").write_text("from backends.base import require_api\n\nrequire_api(2)\n")
    (site / "oldplug-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: oldplug\nVersion: 0.1\n")
    (site / "oldplug-0.1.dist-info" / "entry_points.txt").write_text("[convdiff.backends]\noldplug = oldplug:Adapter\n")
    (tmp_path / "myflip.py").write_text(ADAPTER)
    (tmp_path / "c.yaml").write_text(CASES)
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    proc = convdiff(tmp_path, "run", "c.yaml", "--backends", "oldplug,flipped=myflip:FlippedTorch", "--out", "o", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("BROKEN oldplug-cpu: setup failed: UnknownBackend: cannot import 'oldplug' for backend oldplug:Adapter: "
            "ImportError: this adapter needs convdiff's adapter API 2.0") in proc.stdout
    assert "c.yaml::flip  flipped-cpu  mismatch" in proc.stdout  # the other target ran


def test_a_merged_report_with_a_broken_shard_fails_even_against_a_baseline(tmp_path: Path) -> None:
    """`convdiff report --baseline` (the nightly's merge) must not pass a run in which a target could not run."""
    import json as _json

    from harness.commands.cli import main

    shard = tmp_path / "shard"
    shard.mkdir()
    (shard / "results.jsonl").write_text("")
    (shard / "summary.json").write_text(_json.dumps({"broken_targets": {"paddle-cpu": "setup failed: ImportError: x"},
                                                     "fingerprint": {}, "known_issues": {}}))
    (tmp_path / "base.json").write_text(_json.dumps({"findings": [], "fingerprint": {}, "total": 0}))
    status = main(["report", str(shard / "results.jsonl"), "--out", str(tmp_path / "o"),
                   "--baseline", str(tmp_path / "base.json")])
    assert status == 1
