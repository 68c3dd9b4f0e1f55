"""`@pytest.mark.nightly(why)` (tests/conftest.py): skipped with its reason under make test, run where
CONVDIFF_FULL_TESTS=1, as the nightly's tests job sets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.commands.smoke_select import FULL_TESTS_ENV
from tests.helpers import run_pytest

MARKED = """
import pytest

pytestmark = pytest.mark.nightly("a module's reason")


@pytest.mark.nightly("its own reason")
def test_marked():
    pass


def test_in_a_marked_module():
    pass
"""
PLAIN = "def test_plain():\n    pass\n"
# this suite's conftest, by its path (another distribution installs a top-level `tests` package)
CONFTEST = """
import importlib.util

spec = importlib.util.spec_from_file_location("convdiff_tests_conftest", {path!r})
ours = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ours)
pytest_configure, pytest_collection_modifyitems = ours.pytest_configure, ours.pytest_collection_modifyitems
"""


@pytest.mark.parametrize("env,outcomes", [(None, {"passed": 1, "skipped": 2}), ("0", {"passed": 1, "skipped": 2}),
                                          ("1", {"passed": 3})])
def test_a_marked_test_runs_only_in_the_nightly(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                env: str | None, outcomes: dict[str, int]) -> None:
    monkeypatch.delenv(FULL_TESTS_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(FULL_TESTS_ENV, env)
    pytester.makeconftest(CONFTEST.format(path=str(Path(__file__).with_name("conftest.py"))))
    pytester.makepyfile(test_marked=MARKED, test_plain=PLAIN)
    result = run_pytest(pytester, "-p", "no:convdiff", "-rs", "-W", "error::pytest.PytestUnknownMarkWarning")
    assert result.ret in (0, 5), "\n".join(result.stdout.lines + result.stderr.lines)
    result.assert_outcomes(**outcomes)
    if env != "1":
        out = result.stdout.str()
        assert f"nightly only ({FULL_TESTS_ENV}=1): its own reason" in out  # the closest mark's reason
        assert f"nightly only ({FULL_TESTS_ENV}=1): a module's reason" in out
