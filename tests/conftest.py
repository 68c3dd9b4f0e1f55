"""The harness's own tests: pytester, and the `nightly` marker.

`@pytest.mark.nightly("why")` marks a test (or a module, by `pytestmark`) that `make test` leaves to the
nightly for its cost: it is skipped, with its reason, unless CONVDIFF_FULL_TESTS=1, which the nightly sets
(.github/workflows/nightly.yml: job `tests` runs the harness's tests so, and the `checks` jobs the reproducer
tests, the upstream reports and the probe). A test that leaves only some of its parameters to the nightly reads
the same variable. The why names what it costs and what in make test still covers the same capability; the
measured figures are in the test file.
"""

from __future__ import annotations

import pytest

from harness.commands.smoke_select import FULL_TESTS_ENV, full_tests

pytest_plugins = ["pytester"]


def nightly() -> bool:
    return full_tests()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nightly(why): make test skips it for its cost; CONVDIFF_FULL_TESTS=1 runs it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if nightly():
        return
    for item in items:
        mark = item.get_closest_marker("nightly")
        if mark is not None:
            why = mark.args[0] if mark.args else "see the test file"
            item.add_marker(pytest.mark.skip(reason=f"nightly only ({FULL_TESTS_ENV}=1): {why}"))
