"""Root conftest: `pytest` here collects cases/*.yaml through the convdiff plugin.

When convdiff is installed, its pytest11 entry point already loads the plugin;
otherwise (a plain checkout on sys.path) load it from here, once.
"""

import importlib.metadata

import pytest

if not any(ep.value == "harness.commands.plugin" for ep in importlib.metadata.entry_points(group="pytest11")):
    pytest_plugins = ["harness.commands.plugin"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (make test), hand xdist the largest units first, so that the last
    ones to finish are small: test modules that share a module fixture (each one xdist group),
    then each backend's case items (one group per target: its framework is imported once),
    those that build a model per case first and larger first, then every other test, one by one."""
    if config.getoption("dist", None) != "loadgroup":
        return
    from backends.registry import get_backend

    sizes: dict[str, int] = {}
    for item in items:
        sizes[_group(item)] = sizes.get(_group(item), 0) + 1

    def rank(item: pytest.Item) -> tuple:
        group = _group(item)
        backend = getattr(item, "backend", None)
        if backend is not None:  # a case item (harness/commands/plugin.py)
            return (1, not get_backend(backend).builds_per_case, -sizes[group], group)
        return (0, "", 0, group) if group else (2, "", 0, "")

    items.sort(key=rank)  # stable: within a unit, collection order


def _group(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return ""
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", ""))
