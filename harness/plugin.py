"""pytest plugin: cases/*.yaml become one test item per case x backend x device.

Items run through the same warm, isolated workers as `convdiff run`. Known issues
are xfail (non-strict: a pass shows as XPASS, "fixed upstream?"); a different
failing status than the one known still fails.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from backends.registry import UnknownBackend, get_backend, installed_backends, parse_backends

from .case import Case
from .inputs import make_inputs
from .known_issues import KnownIssues, load_known_issues
from .loader import NOT_CASE_FILES, load_file
from .pool import Worker
from .runner import judge, oracle_for
from .yamlmap import InputError

ORACLE_CACHE = 8  # items of one case run back to back: a few entries are enough


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("convdiff")
    g.addoption("--backends", default=None, help="comma-separated convdiff backends (default: installed frameworks)")
    g.addoption("--device", default="cpu", choices=("cpu", "cuda", "all"), help="convdiff device(s)")
    g.addoption("--tier", default="full", choices=("smoke", "full"), help="smoke: smoke cases only")
    g.addoption("--convdiff-timeout", type=float, default=120.0, help="seconds one case may take")


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
        self.known: dict[Path, KnownIssues] = {}
        self.collected: dict[Path, list[Case]] = {}  # every case seen, all tiers, per directory

    def known_for(self, d: Path) -> KnownIssues:
        """The known_issues.yaml of a case directory, loaded once."""
        if d not in self.known:
            self.known[d] = load_known_issues(d / "known_issues.yaml")
        return self.known[d]

    def worker(self, backend: str, device: str) -> Worker:
        key = f"{backend}-{device}"
        if key not in self.workers:
            w = Worker(backend, device)
            w.ready()
            self.workers[key] = w
        return self.workers[key]

    def oracle(self, case: Case) -> tuple[Any, Any]:
        key = f"{case.file}::{case.id}"
        if key not in self.oracles:
            inputs = make_inputs(case)
            self.oracles[key] = (inputs, oracle_for(case, inputs))
            while len(self.oracles) > ORACLE_CACHE:
                self.oracles.popitem(last=False)
        return self.oracles[key]

    def close(self) -> None:
        for w in self.workers.values():
            w.stop()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[STATE] = ConvdiffState(config)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Warn about known issues that match no case of the corpus (typo or removed case)."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    from backends.registry import REAL_BACKENDS

    for directory, cases in state.collected.items():
        for entry in state.known_for(directory).stale(cases, list(REAL_BACKENDS)):
            terminalreporter.write_line(f"warning: known issue '{entry.id}' matches no case in {directory}", yellow=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()


STATE = pytest.StashKey[ConvdiffState]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".yaml" and file_path.parent.name == "cases" and file_path.name not in NOT_CASE_FILES:
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self):
        state = self.config.stash[STATE]
        cases = load_file(self.path)
        known = state.known_for(self.path.parent)
        state.collected.setdefault(self.path.parent, []).extend(cases)
        for case in cases:
            if state.tier == "smoke" and case.tier != "smoke":
                continue
            for backend in state.backends:
                adapter = get_backend(backend)
                for device in state.devices:
                    if device not in adapter.capabilities.devices:
                        continue
                    item = CaseItem.from_parent(self, name=f"{case.id}[{backend}-{device}]",
                                                case=case, backend=backend, device=device)
                    reason = adapter.unavailable_reason()
                    if reason:
                        item.add_marker(pytest.mark.skip(reason=reason))
                    entry = known.match(case, backend, device)
                    if entry is not None:
                        item.add_marker(pytest.mark.xfail(reason=f"{entry.id}: {entry.reason} ({entry.link})",
                                                          raises=ExpectedDivergence, strict=False))
                        item.known_status = entry.status
                    yield item

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, InputError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, backend: str, device: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.case, self.backend, self.device = case, backend, device
        self.known_status: list[str] = []
        self.record = None

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        worker = state.worker(self.backend, self.device)
        if worker.reason:
            pytest.skip(f"{self.backend}-{self.device}: {worker.reason}")
        inputs, oracle = state.oracle(self.case)
        worker.submit(self.case, inputs)
        payload = worker.collect(state.timeout)
        rec = judge(self.case, self.backend, worker, payload, oracle, None, inputs)
        self.record = rec
        if rec.status == "unsupported":
            pytest.skip(f"unsupported: {rec.message}")
        if rec.status != "pass":
            cls = ExpectedDivergence if rec.status in self.known_status else AssertionError
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
                  f"repro: convdiff repro '{Path(self.case.file).name}::{self.case.id}' --backend {self.backend} --device {self.device}"]
        return "\n".join(lines)

    def reportinfo(self):
        return self.path, self.case.line - 1, f"{self.case.id} on {self.backend}-{self.device}"
