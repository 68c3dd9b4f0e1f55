"""No green on nothing: a pytest run that asked for convdiff and collected no case item fails with one line.

Reproduces what a new user met (2026-11-29): a project of its own whose pyproject.toml declares
`convdiff_cases`, an adapter named by module:Class, and a known-issues file in the parent directory given as
`--convdiff-known-issues ../ours.yaml`. pytest read that path as a test path before the plugin was loaded,
moved its rootdir to the parent directory, never read the project's ini file, and passed the project's one
plain test: "1 passed". The adapter is ONNX's reference evaluator (examples/convdiff-onnx-reference), by
module:Class.
"""

from __future__ import annotations

import pytest

from tests.helpers import run_pytest

pytestmark = pytest.mark.xdist_group("test_plugin_backends")

ADAPTER = "oref=convdiff_onnx_reference:OnnxReferenceBackend"
CASES = ("cases:\n  - {id: small, op: conv2d, in_channels: 2, out_channels: 3, input_size: 5, kernel_size: 3}\n"
         "  - {id: strided, op: conv1d, in_channels: 2, out_channels: 2, input_size: 6, kernel_size: 2, stride: 2}\n")


@pytest.fixture
def project(pytester: pytest.Pytester):
    """The user's project (pytester's directory) and a known-issues file beside it, in its parent."""
    pytester.path.joinpath("pyproject.toml").write_text('[tool.pytest.ini_options]\nconvdiff_cases = ["tests/conv_cases"]\n')
    pytester.mkdir("tests")
    pytester.mkdir("tests/conv_cases")
    pytester.path.joinpath("tests", "conv_cases", "mine.yaml").write_text(CASES)
    pytester.path.joinpath("tests", "test_other.py").write_text("def test_other():\n    pass\n")
    ours = pytester.path.parent / f"{pytester.path.name}-ours.yaml"  # the parent: another test's is its own
    ours.write_text("issues: []\n")
    yield pytester, f"../{ours.name}"
    ours.unlink()


def test_a_space_separated_path_that_moves_the_rootdir_fails_and_says_what_to_type(project) -> None:
    pytester, ours = project
    result = run_pytest(pytester, "-n", "1", "--convdiff-backends", ADAPTER, "--convdiff-known-issues", ours)
    assert result.ret == 1, result.stdout.str()
    line = next(ln for ln in result.stdout.lines if ln.startswith("convdiff: no case item was collected"))
    assert f"pytest took '{ours}', the value of --convdiff-known-issues written with a space" in line
    assert f"{pytester.path / 'pyproject.toml'} was not read: write --convdiff-known-issues={ours}" in line
    fixed = run_pytest(pytester, "--convdiff-backends", ADAPTER, f"--convdiff-known-issues={ours}")
    fixed.assert_outcomes(passed=3)  # the two case items and the plain test
    assert "convdiff:" not in fixed.stdout.str()


def test_a_declared_directory_without_cases_fails_and_a_run_of_other_tests_does_not(project) -> None:
    pytester, _ = project
    pytester.path.joinpath("tests", "conv_cases", "mine.yaml").unlink()
    result = run_pytest(pytester)
    assert result.ret == 1
    assert (f"convdiff: no case item was collected, so nothing was tested: no case file (*.yaml) under the "
            f"declared directories ({pytester.path / 'tests' / 'conv_cases'})") in result.stdout.lines
    # the project's other tests alone asked for no case; and the plugin loads where pytest-xdist is not installed
    # (its xdist hook is optional: an unknown hook would stop every pytest run of the project)
    other = run_pytest(pytester, "tests/test_other.py", "-p", "no:xdist")
    assert other.ret == 0 and "convdiff:" not in other.stdout.str(), other.stdout.str()
