"""pytest plugin: convdiff case files become one test item per case x backend x device (plugin_items.py).

A guest in other projects' pytest runs: installing convdiff changes nothing there. Every option is
namespaced (`--convdiff-...`), and YAML files are collected only from the directories a project declares
(ini `convdiff_cases`, or `--convdiff-cases`) or from files whose first line says `# convdiff: cases`;
until one of those asks for convdiff, the plugin starts nothing (no workers, no shared xdist templates).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from backends.registry import get_backend
from harness.commands import ownership, plugin_empty, smoke_select
from harness.commands.plugin_items import FACTORY, STATE, CaseFile, CaseItem, state_of
from harness.commands.plugin_state import ConvdiffState
from harness.model.loader import CASE_FILE_MARKER, NOT_CASE_FILES

OPTIONS = ("convdiff_backends", "convdiff_cases", "convdiff_known_issues", "convdiff_gradients", "convdiff_relations")


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("convdiff", "convdiff (differential conformance of convolutions)")
    g.addoption("--convdiff-backends", default=None,
                help="comma-separated backends: names, module:Class or name=module:Class (default: every installed one)")
    g.addoption("--convdiff-device", default="cpu", choices=("cpu", "cuda", "all"), help="device(s) to run on")
    g.addoption("--convdiff-tier", default="full", choices=("smoke", "full"), help="smoke: the smoke cases only")
    g.addoption("--convdiff-timeout", type=float, default=120.0, help="seconds one case may take")
    g.addoption("--convdiff-gradients", action="store_true",
                help="also judge every case's gradients (as if gradients: true)")
    g.addoption("--convdiff-relations", default=None, metavar="LIST",
                help="also judge these metamorphic relations (comma-separated, or all): one item per case, target and "
                     "relation, e.g. case[torch-cpu-relation:batch]")
    g.addoption("--convdiff-compiled-smoke", default="cover", choices=smoke_select.CHOICES,
                help="smoke tier on the backends that build a model per case: its cover and known issues, or all")
    g.addoption("--convdiff-known-issues", action="append", default=[], metavar="FILE",
                help="a known-issues file of your own (repeatable), matched before convdiff's own")
    g.addoption("--convdiff-cases", action="append", default=[], metavar="DIR",
                help="collect convdiff case files (*.yaml) under this directory (as ini convdiff_cases does)")
    parser.addini("convdiff_cases", type="paths", default=[],
                  help="directories whose *.yaml files are convdiff cases (relative to the ini file)")


def declared(config: pytest.Config) -> list[Path]:
    """The directories the project declares for convdiff cases: ini `convdiff_cases` and --convdiff-cases."""
    dirs = [Path(p) for p in config.getini("convdiff_cases")]
    dirs += [Path(config.invocation_params.dir, p) for p in config.getoption("convdiff_cases")]
    return [d.resolve() for d in dirs]


def wanted(config: pytest.Config) -> bool:
    """Whether this run asked for convdiff at all (a declared directory or a convdiff option)."""
    return bool(declared(config)) or any(config.getoption(o) for o in OPTIONS)


def pytest_configure(config: pytest.Config) -> None:
    REPORTED.clear()
    config.stash[FACTORY] = ConvdiffState
    config.stash[DECLARED] = declared(config)
    if not wanted(config):
        return  # a foreign project's run: nothing starts until a marked case file is collected
    try:
        ownership.check()
    except ownership.OwnershipError as exc:
        raise pytest.UsageError(f"convdiff: {exc}") from None
    state_of(config)
    from harness.execution import shared  # an xdist session's processes share their zygotes

    if getattr(config, "workerinput", None) is not None:
        shared.adopt()
    elif config.getoption("numprocesses", None) and shared.inherited() is None:  # a nested xdist session
        # (a test's) keeps the session it runs in: its processes adopt the templates already running there
        with contextlib.suppress(OSError):  # no writable temporary directory: each process keeps its own
            config.stash[SHARED] = shared.start_session()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A *.yaml under a declared directory (cases/models/, cases/found/ included), or one with the marker."""
    if file_path.suffix != ".yaml" or file_path.name in NOT_CASE_FILES:
        return None
    here = file_path.resolve()
    if any(here.is_relative_to(d) for d in parent.config.stash.get(DECLARED, [])) or _marked(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


def _marked(path: Path) -> bool:
    """Whether the file's leading comment block (its first lines beginning with #) holds the marker line."""
    try:
        with path.open(encoding="utf-8") as f:
            for _, line in zip(range(8), f):
                if not line.startswith("#"):
                    return False
                if line.strip() == CASE_FILE_MARKER:
                    return True
    except (OSError, UnicodeDecodeError):
        pass
    return False


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The smoke tier on the backends that build a model per case: its cover (harness/commands/smoke_select.py).
    Then, under `--dist loadgroup` (make test) xdist hands each process whole groups, in the order of their
    first items: hand it the largest first, so that the last ones to finish are small. Each target's case
    items are one group (torch-inductor's smoke tier, a C++ compile per graph, is the longest of all), those
    that build a model per case ahead of the rest; then the tests as collected. `state.grouped`, not `dist`:
    xdist's worker processes, which collect and order, see `dist` as "no"."""
    st = config.stash.get(STATE, None)
    if st is None:
        return
    if smoke_select.wanted(config.getoption("convdiff_compiled_smoke"), st.tier):
        items[:], dropped = smoke_select.split(items, builds_per_case)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
    if not st.grouped:
        return

    def rank(item: pytest.Item) -> int:
        if isinstance(item, CaseItem):
            return 0 if builds_per_case(item.backend) else 1
        return 2

    items.sort(key=rank)  # stable: within a rank, as collected


def builds_per_case(backend: str) -> bool:
    return get_backend(backend).builds_per_case


def pytest_itemcollected(item: pytest.Item) -> None:
    """Count the case items collected, before any deselection (see pytest_sessionfinish)."""
    if isinstance(item, CaseItem):
        item.config.stash[CASE_ITEMS] = item.config.stash.get(CASE_ITEMS, 0) + 1


def pytest_collection_finish(session: pytest.Session) -> None:
    st = session.config.stash.get(STATE, None)
    if st is not None:
        st.plan(session.items)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller, which collects nothing, decides (testnodedown)
        workeroutput["convdiff_case_items"] = session.config.stash.get(CASE_ITEMS, 0)
        workeroutput["convdiff_cases_seen"] = sum(map(len, st.collected.values())) if st is not None else 0


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist installed, pytest must not know it
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist's controller: what a worker collected (every worker collects every item)."""
    out = getattr(node, "workeroutput", None) or {}
    if "convdiff_case_items" in out:
        config = node.config
        config.stash[CASE_ITEMS] = max(config.stash.get(CASE_ITEMS, 0), int(out["convdiff_case_items"]))
        config.stash[CASES_SEEN] = max(config.stash.get(CASES_SEEN, 0), int(out.get("convdiff_cases_seen", 0)))
        config.stash[WORKERS_SEEN] = True


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Warn about a rootdir that a space-separated option value moved, and about known issues that match no
    case (typo or removed case), per file."""
    nothing = config.stash.get(NOTHING, None)
    if nothing:  # the session's failure (pytest_sessionfinish, which runs before this summary)
        terminalreporter.write_line(nothing, red=True)
    misread = plugin_empty.misread_rootdir(config) if plugin_empty.options_given(config) else None
    if misread and not nothing:
        terminalreporter.write_line(f"convdiff: warning: {misread}", yellow=True)
    st = config.stash.get(STATE, None)
    if st is None or not st.collected:
        return
    if smoke_select.wanted(config.getoption("convdiff_compiled_smoke"), st.tier):
        terminalreporter.write_line(smoke_select.NOTE)
    for line in st.stale_lines():
        terminalreporter.write_line(line, yellow=True)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note each item that reported (see pytest_sessionfinish)."""
    if report.when == "setup":
        REPORTED.add(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that asked for convdiff and collected no case item fails (harness/commands/plugin_empty.py).
    Under xdist, every collected item must have reported: fail the session if some never ran. (Seen
    once, 2026-11-27: a make test, then ordering the test modules with a shared fixture first, reported 9
    items fewer than it collected, and passed; a rerun of that code ran all. Cause unknown; not silent now.)"""
    config = session.config
    _fail_on_nothing(session, exitstatus)
    if (config.stash.get(STATE, None) is None or getattr(config, "workerinput", None) is not None
            or not config.getoption("numprocesses", None) or config.option.collectonly):
        return
    collected = session.testscollected
    if collected and len(REPORTED) < collected and not session.shouldstop and exitstatus in (0, 1):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        line = (f"convdiff: {collected - len(REPORTED)} of the {collected} collected items never ran "
                "(xdist lost them): the session fails")
        if reporter is not None:
            reporter.write_line(line, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


REPORTED: set[str] = set()  # node ids of the items that reported (the xdist controller counts them)


def _fail_on_nothing(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if getattr(config, "workerinput", None) is not None or exitstatus not in (0, 5):  # 5: no tests collected
        return
    if config.getoption("numprocesses", None) and not config.stash.get(WORKERS_SEEN, False):
        return  # xdist's workers never reported back (they failed to start): pytest reports that itself
    declared_dirs = config.stash.get(DECLARED, [])
    if config.stash.get(CASE_ITEMS, 0) or not plugin_empty.asked(config, declared_dirs):
        return
    st = config.stash.get(STATE, None)
    seen = sum(map(len, st.collected.values())) if st is not None else config.stash.get(CASES_SEEN, 0)
    why = plugin_empty.reason(config, declared_dirs, seen)
    config.stash[NOTHING] = f"convdiff: no case item was collected, so nothing was tested: {why}"  # terminal summary
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    st = config.stash.get(STATE, None)
    if st is not None:
        st.close()
    path = config.stash.get(SHARED, None)
    if path is not None:
        from harness.execution import shared

        shared.end_session(path)


SHARED = pytest.StashKey[Path]()
DECLARED = pytest.StashKey[list[Path]]()
CASE_ITEMS = pytest.StashKey[int]()  # case items collected (before deselection); under xdist, a worker's
CASES_SEEN = pytest.StashKey[int]()  # xdist's controller: the cases a worker loaded
WORKERS_SEEN = pytest.StashKey[bool]()  # xdist's controller: some worker reported what it collected
NOTHING = pytest.StashKey[str]()  # the line that fails a session that collected no case item
