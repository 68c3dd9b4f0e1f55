"""A backend from outside convdiff's tree, as its team would plug it in (docs/guide/adapters.md).

The adapter lives in a temporary directory: torch.nn.functional.convNd with the kernel flipped on purpose
(a convolution instead of a cross-correlation, DOMAIN.md's flip_kernel). It runs by `--backends module:Class`
from the working directory, by `name=module:Class`, and by an installed entry point (a distribution's
metadata on PYTHONPATH, which is what pip writes); in `convdiff run` and under pytest; its failure is caught
and named flip_kernel, and `convdiff repro` writes a script that reproduces it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.execution.host import gpu_present
from tests.helpers import run_pytest

pytestmark = pytest.mark.xdist_group("test_plugin_backends")

ADAPTER = '''
from backends.base import Backend, Capabilities, Output, require_api

require_api(1)


class FlippedTorch(Backend):
    """torch.nn.functional.convNd, with the kernel flipped on purpose."""

    framework = "torch"
    capabilities = Capabilities(ops=("conv1d", "conv2d", "conv3d"), layouts=("channels_first",),
                                dtypes=("float32", "float64"), devices=("cpu",))
    devices = ("cpu",)

    def setup(self, device):
        import torch

        self.torch = torch

    def supports(self, case, device):
        if case.transpose or case.channels_last or case.dtype not in self.capabilities.dtypes:
            return "this adapter runs channels-first float convs only"
        return None

    def run(self, case, inputs, device):
        t, F = self.torch, self.torch.nn.functional
        pads = [p for pair in reversed(case.geometry.pads) for p in pair]
        x = F.pad(t.from_numpy(inputs.x), pads)
        w = t.from_numpy(inputs.w).flip(list(range(2, 2 + case.rank)))
        b = None if inputs.b is None else t.from_numpy(inputs.b)
        y = getattr(F, case.op)(x, w, b, stride=case.stride, dilation=case.dilation, groups=case.groups)
        return Output(y.numpy(), str(y.dtype).removeprefix("torch."), f"F.{case.op}(x, w.flip(spatial dims))")
'''

# the plugin's own reproducer template: run_framework(x, w, b) with torch alone
TEMPLATE = """
import torch
import torch.nn.functional as F


def run_framework(x, w, b):
    xt = F.pad(torch.from_numpy(x_case).to(getattr(torch, DTYPE)), [p for pair in reversed(PADS) for p in pair])
    wt = torch.flip(torch.from_numpy(w), list(range(2, w.ndim))).to(xt.dtype)
    bt = None if b is None else torch.from_numpy(b).to(xt.dtype)
    y = getattr(F, OP)(xt, wt, bt, stride=STRIDE, dilation=DILATION, groups=GROUPS)
    return y.double().numpy(), str(y.dtype).removeprefix("torch.")
"""

CASES = """\
cases:
  - {id: flip, op: conv2d, in_channels: 2, out_channels: 3, input_size: [5, 6], kernel_size: [2, 3], data: integers}
  - {id: pointwise, op: conv1d, in_channels: 2, out_channels: 2, input_size: 7, kernel_size: 1}
"""

OURS = """\
issues:
  - id: our-flip
    backend: flipped
    cases: {case: flip}
    status: mismatch
    reason: our adapter flips the kernel on purpose
    link: https://example.invalid/our-tracker/1
  - id: our-typo
    backend: flipped
    cases: {op: conv9d}
    status: mismatch
    reason: matches nothing
    link: none found
"""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A project of the user's own: the adapter module and a case file, nowhere near convdiff's tree."""
    (tmp_path / "myflip.py").write_text(ADAPTER)
    (tmp_path / "mycases").mkdir()
    (tmp_path / "mycases" / "c.yaml").write_text(CASES)
    return tmp_path


def convdiff(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.commands.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, **(env or {})})


# Left to the nightly for their cost (make test's pytest took 488.6 s on 2026-12-02, 2-core AMD EPYC Zen 5), each where
# a test that stays in make test makes the same run: a one-off adapter's `convdiff run` (8.7 s),
# the same adapter under pytest (5.2 s), a broken framework under pytest (4.3 s) and the generic plugin script (7.7 s).
SAME_RUN = "make test's test_the_users_known_issues_file_makes_their_failure_known runs the same adapter by name=module:Class"


def records(out: Path) -> dict[str, dict]:
    return {r["case_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


@pytest.mark.nightly(SAME_RUN + ", and test_an_installed_entry_point_registers_the_adapter names its flip_kernel")
def test_a_module_class_adapter_runs_and_its_flip_is_named(outside: Path) -> None:
    proc = convdiff(outside, "run", "mycases", "--backends", "flipped=myflip:FlippedTorch", "--out", "o")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    recs = records(outside / "o")
    assert recs["flip"]["backend"] == "flipped"
    assert recs["flip"]["status"] == "mismatch" and recs["flip"]["diagnosis"] == "flip_kernel"
    assert recs["pointwise"]["status"] == "pass"  # a 1-wide kernel is its own flip
    assert "c.yaml::flip  flipped-cpu  mismatch" in proc.stdout and "flip_kernel" in proc.stdout
    convdiff(outside, "run", "mycases", "--backends", "myflip:FlippedTorch", "--out", "o2")
    assert records(outside / "o2")["flip"]["backend"] == "myflip:FlippedTorch"


@pytest.mark.nightly("test_plugin_review's test_the_repro_line_of_a_pytest_failure_runs_as_printed runs the same "
                     "generic plugin script to its verdict")
def test_the_repro_of_a_plugin_result_reproduces_it(outside: Path) -> None:
    proc = convdiff(outside, "repro", "flip", "--backend", "flipped=myflip:FlippedTorch", "--cases", "mycases")
    assert proc.returncode == 0, proc.stderr
    script = outside / "repro.py"
    script.write_text(proc.stdout)
    ran = subprocess.run([sys.executable, str(script)], cwd=outside, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "verdict: mismatch" in ran.stdout


def test_an_installed_entry_point_registers_the_adapter(outside: Path) -> None:
    site = outside / "site"
    (site / "myflip-0.1.dist-info").mkdir(parents=True)
    (site / "myflip.py").write_text(ADAPTER)
    (site / "myflip-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: myflip\nVersion: 0.1\n")
    (site / "myflip-0.1.dist-info" / "entry_points.txt").write_text(
        "[convdiff.backends]\nflipped = myflip:FlippedTorch\n\n[convdiff.repro]\nflipped = myflip:repro_template\n")
    with (site / "myflip.py").open("a") as f:  # the plugin's own reproducer template (entry point convdiff.repro)
        f.write("\n\ndef repro_template(rec, case):\n    return TEMPLATE\n\n\nTEMPLATE = " + repr(TEMPLATE) + "\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listing = convdiff(outside / "mycases", "backends", "--backends", "flipped", env=env)
    assert "[myflip 0.1]" in listing.stdout, listing.stdout + listing.stderr
    proc = convdiff(outside / "mycases", "run", ".", "--backends", "flipped", "--out", str(outside / "o"), env=env)
    assert proc.returncode == 1 and records(outside / "o")["flip"]["diagnosis"] == "flip_kernel"
    repro = convdiff(outside / "mycases", "repro", "flip", "--backend", "flipped", "--cases", ".", env=env)
    assert "torch.flip(torch.from_numpy(w)" in repro.stdout and "backends.registry" not in repro.stdout
    script = outside / "repro.py"
    script.write_text(repro.stdout)  # torch and NumPy only: the plugin's template, not the generic script
    ran = subprocess.run([sys.executable, str(script)], cwd=outside, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1 and "verdict: mismatch" in ran.stdout, ran.stdout + ran.stderr


def test_the_users_known_issues_file_makes_their_failure_known(outside: Path) -> None:
    (outside / "ours.yaml").write_text(OURS)
    proc = convdiff(outside, "run", "mycases", "--backends", "flipped=myflip:FlippedTorch", "--known-issues",
                    "ours.yaml", "--out", "o")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rec = records(outside / "o")["flip"]
    assert rec["known_issue"] == "our-flip" and rec["known_issue_file"] == "ours.yaml"
    assert "ours.yaml" in (outside / "o" / "report.html").read_text()
    junit = (outside / "o" / "junit.xml").read_text()
    assert 'type="known-issue"' in junit and "known wrong value: mismatch" in junit
    assert "known issue 'our-typo' (ours.yaml) matches no case" in proc.stderr  # stale, per file


def test_a_case_file_outside_cases_gets_convdiffs_known_issues(tmp_path: Path) -> None:
    """Paddle's SAME resets dilation to 1 (cases/known_issues.yaml paddle-same-dilation-ignored): a case file
    of the user's own, far from convdiff's cases/, hits it and reports it as known, with its link."""
    pytest.importorskip("paddle")
    (tmp_path / "dilated.yaml").write_text(
        "cases:\n  - {id: same_dilated, op: conv2d, in_channels: 2, out_channels: 2, input_size: 7,"
        " kernel_size: 3, padding: same, dilation: 2}\n")
    proc = convdiff(tmp_path, "run", "dilated.yaml", "--backends", "paddle", "--out", "o")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rec = records(tmp_path / "o")["same_dilated"]
    assert rec["status"] == "mismatch" and rec["known_issue"] == "paddle-same-dilation-ignored"
    assert Path(rec["known_issue_file"]).resolve() == (Path(__file__).parents[1] / "cases" / "known_issues.yaml").resolve()
    assert "0 unexpected" in proc.stdout


@pytest.mark.nightly("test_plugin_review's test_the_repro_line_of_a_pytest_failure_runs_as_printed makes the same "
                     "pytest run of a one-off adapter (one pass, one failure)")
def test_pytest_runs_a_plugin_adapter(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("myflip.py").write_text(ADAPTER)
    pytester.mkdir("mycases")
    pytester.path.joinpath("mycases", "c.yaml").write_text(CASES)
    pytester.makeini("[pytest]\nconvdiff_cases = mycases\n")
    result = run_pytest(pytester, "mycases", "--convdiff-backends", "flipped=myflip:FlippedTorch")
    result.assert_outcomes(passed=1, failed=1)
    assert "c.yaml::flip[flipped-cpu]" in result.stdout.str() and "mismatch" in result.stdout.str()


def broken_paddle(tmp_path: Path) -> dict[str, str]:
    """A paddle whose import fails, as a broken nightly wheel does; found first on PYTHONPATH."""
    (tmp_path / "broken" / "paddle").mkdir(parents=True)
    (tmp_path / "broken" / "paddle" / "__init__.py").write_text(
        "raise ImportError('libpaddle.so: undefined symbol: _ZN6paddle8platform (a broken build)')\n")
    return {"PYTHONPATH": os.pathsep.join([str(tmp_path / "broken"), os.environ.get("PYTHONPATH", "")])}


def test_a_broken_framework_fails_the_run_and_is_named(tmp_path: Path) -> None:
    env = broken_paddle(tmp_path)
    (tmp_path / "c.yaml").write_text(CASES)
    proc = convdiff(tmp_path, "run", "c.yaml", "--backends", "paddle", "--out", "o", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BROKEN paddle-cpu: setup failed: ImportError: libpaddle.so" in proc.stdout
    junit = (tmp_path / "o" / "junit.xml").read_text()
    assert '<error type="broken"' in junit and "paddle-cpu" in junit


def test_a_named_backend_without_results_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CASES)
    proc = convdiff(tmp_path, "run", "c.yaml", "--backends", "torch", "--device", "cuda", "--out", "o")
    assert proc.returncode in (0, 1)
    if not gpu_present():  # no GPU device node: no framework can run CUDA here (asking torch is a worker's start)
        assert proc.returncode == 1 and "NO RESULT torch" in proc.stdout


@pytest.mark.nightly("the broken target under pytest is test_plugin_review's "
                     "test_a_target_whose_setup_raises_is_a_one_line_error_under_pytest; the broken import is "
                     "test_a_broken_framework_fails_the_run_and_is_named's")
def test_a_broken_framework_is_an_error_under_pytest(pytester: pytest.Pytester, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    env = broken_paddle(tmp_path)
    pytester.mkdir("cases")
    pytester.path.joinpath("cases", "c.yaml").write_text(CASES)
    pytester.makeini("[pytest]\nconvdiff_cases = cases\n")
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    result = run_pytest(pytester, "cases", "--convdiff-backends", "paddle")
    assert result.ret == 1
    result.assert_outcomes(errors=2)
    assert "paddle-cpu is installed but broken: setup failed: ImportError" in result.stdout.str()


FOREIGN_CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--device", default="cpu")
"""
FOREIGN_TEST = """
def test_device(request):
    assert request.config.getoption("device") == "gpu0"
"""


def test_a_foreign_projects_pytest_runs_as_without_convdiff(pytester: pytest.Pytester) -> None:
    """Its own --device option, and an unrelated YAML under tests/cases/: with convdiff installed, pytest
    collects and runs exactly what it does with convdiff's plugin switched off."""
    pytester.makeconftest(FOREIGN_CONFTEST)
    pytester.mkdir("tests")
    pytester.mkdir("tests/cases")
    pytester.path.joinpath("tests", "cases", "golden_config.yaml").write_text("threshold: 3\nnames: [a, b]\n")
    pytester.path.joinpath("tests", "test_device.py").write_text(FOREIGN_TEST)
    with_convdiff = run_pytest(pytester, "tests", "--device", "gpu0", "-v")
    without = run_pytest(pytester, "tests", "--device", "gpu0", "-v", "-p", "no:convdiff")
    assert with_convdiff.ret == without.ret == 0, with_convdiff.stdout.str()
    with_convdiff.assert_outcomes(passed=1)
    ran = [ln for ln in with_convdiff.stdout.lines if "::" in ln]
    assert ran == [ln for ln in without.stdout.lines if "::" in ln]


def test_the_guide_shows_the_example_adapter_as_it_is() -> None:
    """docs/guide/adapters.md quotes examples/convdiff-onnx-reference whole: the code a newcomer copies runs."""
    root = Path(__file__).parents[1]
    guide = (root / "docs" / "guide" / "adapters.md").read_text()
    example = root / "examples" / "convdiff-onnx-reference"
    assert (example / "convdiff_onnx_reference" / "__init__.py").read_text() in guide
    assert (example / "pyproject.toml").read_text() in guide


def test_a_marked_case_file_is_collected_wherever_it_is(pytester: pytest.Pytester) -> None:
    """No convdiff_cases declared: only a YAML file whose first line is `# convdiff: cases` (what
    `convdiff extract` writes) becomes convdiff items; another YAML beside it is left alone."""
    pytester.mkdir("models")
    pytester.path.joinpath("models", "net.yaml").write_text("# our model\n# convdiff: cases\n" + CASES)
    pytester.path.joinpath("models", "other.yaml").write_text(CASES)
    result = run_pytest(pytester, "models", "--convdiff-backends", "torch", "--collect-only", "-q")
    ids = [ln for ln in result.stdout.lines if "::" in ln]
    assert ids == ["models/net.yaml::flip[torch-cpu]", "models/net.yaml::pointwise[torch-cpu]"], result.stdout.str()
