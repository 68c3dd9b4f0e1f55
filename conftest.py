"""Root conftest: `pytest` here collects cases/*.yaml through the convdiff plugin.

When convdiff is installed, its pytest11 entry point already loads the plugin;
otherwise (a plain checkout on sys.path) load it from here, once.
"""

import importlib.metadata

if not any(ep.value == "harness.commands.plugin" for ep in importlib.metadata.entry_points(group="pytest11")):
    pytest_plugins = ["harness.commands.plugin"]

