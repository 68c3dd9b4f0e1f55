"""pytest plugin: convdiff case files become one test item per case x backend x device (plugin_items.py).

A guest in other projects' pytest runs: installing convdiff changes nothing there. Every option is
namespaced (`--convdiff-...`), and YAML files are collected only from the directories a project declares
(ini `convdiff_cases`, or `--convdiff-cases`) or from files whose first line says `# convdiff: cases`;
until one of those asks for convdiff, the plugin starts nothing (no workers, no shared xdist templates).
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from backends.registry import UnknownBackend, get_backend, installed_backends, parse_backends, real_backends
from harness.commands import ownership, plugin_empty, smoke_select
from harness.commands.plugin_items import FACTORY, STATE, CaseFile, CaseItem, state_of
from harness.execution.pool import Worker, stop_all
from harness.execution.prefetch import nbytes
from harness.execution.relation_exec import RelationPlan, Shadows, run_relations
from harness.execution.runner import gradient_oracle_for, oracle_for
from harness.execution.warm_pool import POOL, release
from harness.judge.known_issues import KnownIssues, layered, shown
from harness.model.case import Case
from harness.model.loader import CASE_FILE_MARKER, NOT_CASE_FILES
from harness.model.yamlmap import InputError
from harness.numerics.inputs import make_inputs
from harness.numerics.relations import RelationError, parse_relations

ORACLE_CACHE = 8  # worker answers: the items of one case run back to back, a few entries are enough
# inputs and oracles: make test runs items grouped by target, so a case comes back once per target; the
# smoke tier's all fit (73 cases, < 1 MB), a full tier's are kept as far as this many bytes of arrays
ORACLE_CACHE_BYTES = 256 << 20
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


class ConvdiffState:
    """Per pytest process: the warm workers, the oracle cache and the known issues."""

    def __init__(self, config: pytest.Config) -> None:
        try:
            names = config.getoption("convdiff_backends")
            self.backends = parse_backends(names) if names else installed_backends()
        except UnknownBackend as exc:
            raise pytest.UsageError(str(exc)) from None
        device = config.getoption("convdiff_device")
        self.devices = ("cpu", "cuda") if device == "all" else (device,)
        self.tier = config.getoption("convdiff_tier")
        self.timeout = config.getoption("convdiff_timeout")
        self.user_known = list(config.getoption("convdiff_known_issues"))
        self.workers: dict[str, Worker] = {}
        self.oracles: OrderedDict[str, Any] = OrderedDict()
        self.oracle_bytes = 0
        self.gradients = bool(config.getoption("convdiff_gradients"))
        try:
            names = config.getoption("convdiff_relations")
            self.relations = RelationPlan(parse_relations(names)) if names else None
        except RelationError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.shadows: dict[str, Shadows] = {}  # target -> the relations' second, thread-count and kernel-variant workers
        self.relation_payloads: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        # a gradient case's items (out, grad_*) share one worker answer and one gradient oracle
        self.answers: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        self.grad_oracles: OrderedDict[str, Any] = OrderedDict()
        self.known: dict[Path, KnownIssues] = {}
        self.reasons: dict[str, str | None] = {}  # backend -> its unavailable_reason (see unavailable)
        self.collected: dict[Path, list[Case]] = {}  # every case seen, all tiers, per directory
        self.planned: dict[str, list[Case]] = {}  # target -> the cases of the items this process may run
        self.items_left: dict[str, int] = {}  # target -> its items not run yet (loadgroup: all run here)
        # xdist: a target's items on one process. In its worker processes xdist sets `dist` to "no" and
        # leaves `--dist loadgroup` as option.loadgroup (xdist/remote.py setup_config).
        self.grouped = (config.getoption("dist", None) == "loadgroup"
                        or bool(getattr(config.option, "loadgroup", False)))
        POOL.enabled = True  # test modules and case items share warm workers (harness/execution/pool.py)

    def unavailable(self, backend: str) -> str | None:
        """The backend's unavailable_reason, asked once per process (a find_spec per module: ~0.3 ms each,
        and make test's collection asked it for each of its ~2,700 case items, in each xdist process)."""
        if backend not in self.reasons:
            self.reasons[backend] = get_backend(backend).unavailable_reason()
        return self.reasons[backend]

    def known_for(self, d: Path) -> KnownIssues:
        """The known issues of a case directory (the user's files, its own known_issues.yaml, convdiff's), once."""
        if d not in self.known:
            try:
                shipped = [get_backend(b).known_issues_path() for b in self.backends]
                self.known[d] = layered(self.user_known, [d], shipped)
            except InputError as exc:
                raise pytest.UsageError(str(exc)) from None
        return self.known[d]

    def worker(self, backend: str, device: str) -> Worker:
        key = f"{backend}-{device}"
        if key not in self.workers:
            w = POOL.take(backend, device) or Worker(backend, device)
            if w.ready():
                w.prepare(self.share(key))
            self.workers[key] = w
        return self.workers[key]

    def done(self, backend: str, device: str) -> None:
        """An item of the target ran. Under `--dist loadgroup` this process runs all of a target's
        items, so after its last one the worker goes to the warm pool, for the tests that follow."""
        key = f"{backend}-{device}"
        self.items_left[key] = self.items_left.get(key, 0) - 1
        if self.grouped and self.items_left[key] <= 0 and key in self.workers:
            release([self.workers.pop(key)])
        if self.items_left[key] <= 0 and key in self.shadows:
            self.shadows.pop(key).stop()

    def plan(self, items: list[pytest.Item]) -> None:
        """Note each target's cases among the collected items, for Backend.prepare (batched builds)."""
        for item in items:
            if isinstance(item, CaseItem):
                key = f"{item.backend}-{item.device}"
                self.items_left[key] = self.items_left.get(key, 0) + 1
                if item.output == "out" and item.case.geometry is not None:
                    self.planned.setdefault(key, []).append(item.case)

    def share(self, target: str) -> list[Case]:
        """This process's share of a target's cases to build ahead. Under pytest-xdist every process
        collects every item; with `--dist loadgroup` the process that runs a target's first item runs
        them all, so it builds them all. Otherwise any process may run any item, so each builds a
        disjoint 1/n ahead into the shared cache; an item whose build another process has not
        finished yet builds alone, as before."""
        if self.grouped:
            return self.planned.get(target, [])
        n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
        rank = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
        return self.planned.get(target, [])[rank::n]

    def oracle(self, case: Case) -> tuple[Any, Any]:
        key = f"{case.file}::{case.id}"
        if key in self.oracles:
            self.oracles.move_to_end(key)
        else:
            inputs = make_inputs(case)
            self.oracles[key] = (inputs, oracle_for(case, inputs))
            self.oracle_bytes += nbytes(self.oracles[key])
            while self.oracle_bytes > ORACLE_CACHE_BYTES and len(self.oracles) > 1:
                self.oracle_bytes -= nbytes(self.oracles.popitem(last=False)[1])
        return self.oracles[key]

    def answer(self, case: Case, worker: Worker, inputs: Any) -> dict[str, Any]:
        """The worker's payload for a case, run once for all of its items (forward and gradients)."""
        key = (f"{case.file}::{case.id}", worker.backend, worker.device)
        if key not in self.answers:
            worker.submit(case, inputs)
            self.answers[key] = worker.collect(self.timeout)
            while len(self.answers) > ORACLE_CACHE:
                self.answers.popitem(last=False)
        return self.answers[key]

    def relation_payload(self, case: Case, worker: Worker, inputs: Any, oracle: Any) -> dict[str, Any]:
        """The case's answer with every run its relations need (harness/execution/relation_exec.py), once for
        all of its relation items."""
        key = (f"{case.file}::{case.id}", worker.backend, worker.device)
        if key not in self.relation_payloads:
            assert self.relations is not None
            target = f"{worker.backend}-{worker.device}"

            def shadows() -> Shadows:
                if target not in self.shadows:
                    self.shadows[target] = Shadows(worker.backend, worker.device, worker.threads, worker.host)
                return self.shadows[target]

            self.relation_payloads[key] = run_relations(worker, shadows, case, inputs, oracle,
                                                        self.relations.for_case(case), self.timeout,
                                                        self.answer(case, worker, inputs))
            while len(self.relation_payloads) > ORACLE_CACHE:
                self.relation_payloads.popitem(last=False)
        return self.relation_payloads[key]

    def grad_oracle(self, case: Case, inputs: Any) -> dict[str, Any]:
        key = f"{case.file}::{case.id}"
        if key not in self.grad_oracles:
            self.grad_oracles[key] = gradient_oracle_for(case, inputs)
            while len(self.grad_oracles) > ORACLE_CACHE:
                self.grad_oracles.popitem(last=False)
        return self.grad_oracles[key]

    def stale_lines(self) -> list[str]:
        """Known issues that match no collected case, per file: a directory's own file against that
        directory's cases, convdiff's own only against its whole corpus, the user's files against all."""
        everything = [c for cases in self.collected.values() for c in cases]
        lines = []
        for directory, cases in self.collected.items():
            for source in self.known_for(directory).sources:
                own = Path(source).resolve() == (directory / "known_issues.yaml").resolve()
                if not own or source in self.user_known:
                    continue
                mine = KnownIssues([e for e in self.known_for(directory).entries if e.source == source])
                lines += [f"warning: known issue '{e.id}' ({shown(source)}) matches no case in {directory}"
                          for e in mine.stale(cases, real_backends())]
        for source in self.user_known:
            mine = KnownIssues([e for e in layered([source], []).entries if e.source == source])
            lines += [f"warning: known issue '{e.id}' ({shown(source)}) matches no collected case"
                      for e in mine.stale(everything, real_backends())]
        return lines

    def close(self) -> None:
        stop_all(list(self.workers.values()))
        for shadows in self.shadows.values():
            shadows.stop()
        POOL.close()


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
