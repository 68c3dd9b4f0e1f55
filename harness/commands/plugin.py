"""pytest plugin: cases/*.yaml become one test item per case x backend x device.

Items run through the same warm, isolated workers as `convdiff run`. Known issues
are xfail (non-strict: a pass shows as XPASS, "fixed upstream?"); a different
failing status than the one known still fails.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from backends.registry import UnknownBackend, get_backend, installed_backends, parse_backends
from harness.commands import smoke_select
from harness.execution.host import cpu_facts, merged
from harness.execution.pool import Worker, stop_all
from harness.execution.prefetch import nbytes
from harness.execution.runner import gradient_oracle_for, oracle_for
from harness.execution.warm_pool import POOL, release
from harness.judge.known_issues import KnownIssue, KnownIssues, load_known_issues
from harness.judge.verdict import judge, judge_case
from harness.model.case import Case
from harness.model.loader import NOT_CASE_FILES, known_issues_dir, load_file
from harness.model.yamlmap import InputError
from harness.numerics.inputs import make_inputs

ORACLE_CACHE = 8  # worker answers: the items of one case run back to back, a few entries are enough
# inputs and oracles: make test runs items grouped by target, so a case comes back once per target; the
# smoke tier's all fit (73 cases, < 1 MB), a full tier's are kept as far as this many bytes of arrays
ORACLE_CACHE_BYTES = 256 << 20


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("convdiff")
    g.addoption("--backends", default=None, help="comma-separated convdiff backends (default: installed frameworks)")
    g.addoption("--device", default="cpu", choices=("cpu", "cuda", "all"), help="convdiff device(s)")
    g.addoption("--tier", default="full", choices=("smoke", "full"), help="smoke: smoke cases only")
    g.addoption("--convdiff-timeout", type=float, default=120.0, help="seconds one case may take")
    g.addoption("--gradients", action="store_true", help="also judge every case's gradients (as if gradients: true)")
    g.addoption("--compiled-smoke", default="cover", choices=smoke_select.CHOICES,
                help="smoke tier on the backends that build a model per case: its cover and known issues, or all")


class ExpectedDivergence(AssertionError):
    """Raised when a result has exactly the status its known issue predicts."""


class ConvdiffState:
    """Per pytest process: the warm workers, the oracle cache and the known issues."""

    def __init__(self, config: pytest.Config) -> None:
        try:
            self.backends = parse_backends(config.getoption("backends")) if config.getoption("backends") else installed_backends()
        except UnknownBackend as exc:
            raise pytest.UsageError(str(exc)) from None
        device = config.getoption("device")
        self.devices = ("cpu", "cuda") if device == "all" else (device,)
        self.tier = config.getoption("tier")
        self.timeout = config.getoption("convdiff_timeout")
        self.workers: dict[str, Worker] = {}
        self.oracles: OrderedDict[str, Any] = OrderedDict()
        self.oracle_bytes = 0
        self.gradients = bool(config.getoption("gradients"))
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

    def unavailable(self, backend: str) -> str | None:
        """The backend's unavailable_reason, asked once per process (a find_spec per module: ~0.3 ms each,
        and make test's collection asked it for each of its ~2,700 case items, in each xdist process)."""
        if backend not in self.reasons:
            self.reasons[backend] = get_backend(backend).unavailable_reason()
        return self.reasons[backend]

    def known_for(self, d: Path) -> KnownIssues:
        """The known_issues.yaml of a case directory, loaded once."""
        if d not in self.known:
            self.known[d] = load_known_issues(d / "known_issues.yaml")
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

    def grad_oracle(self, case: Case, inputs: Any) -> dict[str, Any]:
        key = f"{case.file}::{case.id}"
        if key not in self.grad_oracles:
            self.grad_oracles[key] = gradient_oracle_for(case, inputs)
            while len(self.grad_oracles) > ORACLE_CACHE:
                self.grad_oracles.popitem(last=False)
        return self.grad_oracles[key]

    def close(self) -> None:
        stop_all(list(self.workers.values()))
        POOL.close()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[STATE] = ConvdiffState(config)
    REPORTED.clear()
    POOL.enabled = True  # test modules and case items share warm workers (harness/execution/pool.py)
    from harness.execution import shared  # an xdist session's processes share their zygotes

    if getattr(config, "workerinput", None) is not None:
        shared.adopt()
    elif config.getoption("numprocesses", None) and shared.inherited() is None:  # a nested xdist session
        # (a test's) keeps the session it runs in: its processes adopt the templates already running there
        with contextlib.suppress(OSError):  # no writable temporary directory: each process keeps its own
            config.stash[SHARED] = shared.start_session()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The smoke tier on the backends that build a model per case: its cover (harness/commands/smoke_select.py).
    Then, under `--dist loadgroup` (make test) xdist hands each process whole groups, in the order of their
    first items: hand it the largest first, so that the last ones to finish are small. Each target's case
    items are one group (torch-inductor's smoke tier, a C++ compile per graph, is the longest of all), those
    that build a model per case ahead of the rest; then the tests as collected. `state.grouped`, not `dist`:
    xdist's worker processes, which collect and order, see `dist` as "no" (the README: ordering)."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if smoke_select.wanted(config.getoption("compiled_smoke"), state.tier):
        items[:], dropped = smoke_select.split(items, builds_per_case)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
    if not state.grouped:
        return

    def rank(item: pytest.Item) -> int:
        if isinstance(item, CaseItem):
            return 0 if builds_per_case(item.backend) else 1
        return 2

    items.sort(key=rank)  # stable: within a rank, as collected


def builds_per_case(backend: str) -> bool:
    return get_backend(backend).builds_per_case


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash.get(STATE, None)
    if state is not None:
        state.plan(session.items)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Warn about known issues that match no case of the corpus (typo or removed case)."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if smoke_select.wanted(config.getoption("compiled_smoke"), state.tier):
        terminalreporter.write_line(smoke_select.NOTE)
    from backends.registry import REAL_BACKENDS

    for directory, cases in state.collected.items():
        for entry in state.known_for(directory).stale(cases, list(REAL_BACKENDS)):
            terminalreporter.write_line(f"warning: known issue '{entry.id}' matches no case in {directory}", yellow=True)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note each item that reported (see pytest_sessionfinish)."""
    if report.when == "setup":
        REPORTED.add(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under xdist, every collected item must have reported: fail the session if some never ran. (Seen
    once, 2026-11-27: a make test, then ordering the test modules with a shared fixture first, reported 9
    items fewer than it collected, and passed; a rerun of that code ran all. Cause unknown; not silent now.)"""
    config = session.config
    if (getattr(config, "workerinput", None) is not None or not config.getoption("numprocesses", None)
            or config.option.collectonly):
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


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()
    path = config.stash.get(SHARED, None)
    if path is not None:
        from harness.execution import shared

        shared.end_session(path)


STATE = pytest.StashKey[ConvdiffState]()
SHARED = pytest.StashKey[Path]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # cases/*.yaml and their subdirectories (cases/models/, cases/found/)
    in_cases = "cases" in file_path.parent.parts[-2:]
    if file_path.suffix == ".yaml" and in_cases and file_path.name not in NOT_CASE_FILES:
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self):
        state = self.config.stash[STATE]
        cases = load_file(self.path)
        where = known_issues_dir(self.path.parent)  # cases/models/ uses cases/known_issues.yaml
        known = state.known_for(where)
        state.collected.setdefault(where, []).extend(cases)
        for case in cases:
            if state.tier == "smoke" and case.tier != "smoke":
                continue
            if state.gradients and not case.gradients:
                case = dataclasses.replace(case, gradients=True)
            for backend in state.backends:
                adapter = get_backend(backend)
                for device in state.devices:
                    if device not in adapter.capabilities.devices:
                        continue
                    for output in ("out", *case.gradient_outputs):
                        suffix = "" if output == "out" else f"-{output}"  # forward ids stay as they were
                        item = CaseItem.from_parent(self, name=f"{case.id}[{backend}-{device}{suffix}]",
                                                    case=case, backend=backend, device=device, output=output)
                        # under `--dist loadgroup` (make test) one xdist process runs all of a
                        # target's items: its framework is imported once and its builds batch whole
                        item.add_marker(pytest.mark.xdist_group(f"{backend}-{device}"))
                        reason = state.unavailable(backend)
                        if reason:
                            item.add_marker(pytest.mark.skip(reason=reason))
                        item.known = known.candidates(case, backend, device, output)
                        item.forward_known = known.candidates(case, backend, device) if output != "out" else []
                        if item.known and not any(e.host for e in item.known):
                            item.expect(item.known[0])
                        yield item

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, InputError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, backend: str, device: str, output: str = "out", **kw: Any) -> None:
        super().__init__(**kw)
        self.case, self.backend, self.device, self.output = case, backend, device, output
        self.forward_known: list[KnownIssue] = []  # a gradient item whose forward failed takes these
        self.known_status: list[str] = []
        self.known: list[KnownIssue] = []  # entries matching on some host; `host:` ones decided at run time
        self.record = None

    def expect(self, entry: KnownIssue) -> None:
        self.add_marker(pytest.mark.xfail(reason=f"{entry.id}: {entry.reason} ({entry.link})",
                                          raises=ExpectedDivergence, strict=False))
        self.known_status = entry.status

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        try:
            self._run(state)
        finally:
            state.done(self.backend, self.device)

    def _run(self, state: ConvdiffState) -> None:
        worker = state.worker(self.backend, self.device)
        if worker.reason:
            pytest.skip(f"{self.backend}-{self.device}: {worker.reason}")
        if any(e.host for e in self.known):
            # Host-dependent entries: the worker's live facts decide. pytest reads xfail marks
            # added during the call when none was there at setup.
            facts = merged(cpu_facts(), worker.host)
            entry = next((e for e in self.known if e.host_matches(facts)), None)
            if entry is not None:
                self.expect(entry)
        inputs, oracle = state.oracle(self.case)
        payload = state.answer(self.case, worker, inputs) if self.case.gradient_outputs else None
        if payload is None:
            worker.submit(self.case, inputs)
            payload = worker.collect(state.timeout)
        if self.output == "out":
            rec = judge(self.case, self.backend, worker, payload, oracle, None, inputs)
        else:
            recs = judge_case(self.case, self.backend, worker, payload, oracle, None, inputs,
                              state.grad_oracle(self.case, inputs))
            rec = next(r for r in recs if r.output == self.output)
            sub = (payload.get("grads") or {}).get(self.output) or {"inherited": True}
            if sub.get("inherited") and not self.known_status and self.forward_known:
                facts = merged(cpu_facts(), worker.host)
                entry = next((e for e in self.forward_known if e.host_matches(facts)), None)
                if entry is not None:
                    self.expect(entry)  # the backward pass never ran: the forward's known issue stands
        self.record = rec
        if rec.status == "unsupported":
            pytest.skip(f"unsupported: {rec.message}")
        if rec.status != "pass":
            known_status = self.known_status
            if rec.status == "mismatch" and any(e.max_rel_err is not None for e in self.known):
                # as the run's judge: the first entry that explains an error this large decides
                facts = merged(cpu_facts(), worker.host)
                entry = next((e for e in self.known if e.host_matches(facts) and e.explains(rec.error_size)), None)
                known_status = entry.status if entry is not None else []
            cls = ExpectedDivergence if rec.status in known_status else AssertionError
            raise cls(rec.status)

    def repr_failure(self, excinfo, style=None):
        rec = self.record
        if rec is None or not isinstance(excinfo.value, AssertionError):
            return super().repr_failure(excinfo, style)
        lines = [f"{rec.status}: {rec.message}"]
        if rec.bound_ratio is not None:
            lines.append(f"max |err| {rec.max_abs_err:.3g}, bound ratio {rec.bound_ratio:.3g}")
        lines += ["call:", *("    " + ln for ln in rec.translation.splitlines()),
                  f"case: {self.case.file}:{self.case.line}  seed {self.case.seed}",
                  f"repro: convdiff repro '{Path(self.case.file).name}::{self.case.id}' --backend {self.backend} --device {self.device}"
                  + (f" --output {self.output}" if self.output != "out" else "")]
        return "\n".join(lines)

    def reportinfo(self):
        what = "" if self.output == "out" else f" ({self.output})"
        return self.path, self.case.line - 1, f"{self.case.id} on {self.backend}-{self.device}{what}"
