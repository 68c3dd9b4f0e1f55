"""The detection score: every historical bug class, seeded into torch, is caught and named on the smoke tier."""

from __future__ import annotations

import pytest

from backends.registry import UnknownBackend, get_backend
from backends.testing.mutants import MUTANTS
from harness.commands.selftest import format_selftest, run_selftest

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_mutants")


@pytest.fixture(scope="module")
def selftest():
    """All mutants and torch in ONE run over the smoke tier (warm workers shared across cases)."""
    return run_selftest(["cases"], timeout=120.0)


def test_mutants_are_registered_test_doubles():
    for bug in MUTANTS:
        backend = get_backend(f"mutant:{bug}")
        assert backend.test_only and backend.name == f"mutant:{bug}"
    with pytest.raises(UnknownBackend):
        get_backend("mutant:no_such_bug")


@pytest.mark.slow
def test_torch_is_clean_on_the_smoke_tier(selftest):
    assert not selftest.skipped, selftest.skipped
    assert not selftest.reference_failures, format_selftest(selftest)


@pytest.mark.slow
@pytest.mark.parametrize("bug", MUTANTS)
def test_each_mutant_is_caught_and_diagnosed_as_its_own_class(selftest, bug):
    score = next(s for s in selftest.scores if s.bug == bug)
    assert score.run > 0
    assert score.caught >= 1, f"mutant:{bug} was never caught\n{format_selftest(selftest)}"
    assert score.dominant == bug, f"mutant:{bug} mostly diagnosed as {score.diagnoses}\n{format_selftest(selftest)}"


@pytest.mark.slow
def test_selftest_table_says_ok(selftest):
    text = format_selftest(selftest)
    assert "torch: clean" in text and text.rstrip().endswith("ok")
