"""The pytest plugin's state in one pytest process: its warm workers, the oracle and answer caches, the known
issues per case directory, and the plan of the items this process may run (harness/commands/plugin.py makes it
on first use, through plugin_items.state_of)."""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from backends.registry import UnknownBackend, get_backend, installed_backends, parse_backends, real_backends
from harness.commands.plugin_items import CaseItem
from harness.execution.pool import Worker, stop_all
from harness.execution.prefetch import nbytes
from harness.execution.relation_exec import RelationPlan, Shadows, run_relations
from harness.execution.runner import gradient_oracle_for, oracle_for
from harness.execution.warm_pool import POOL, release
from harness.judge.known_issues import KnownIssues, layered, shown
from harness.model.case import Case
from harness.model.yamlmap import InputError
from harness.numerics.inputs import make_inputs
from harness.numerics.relations import RelationError, parse_relations

ORACLE_CACHE = 8  # worker answers: the items of one case run back to back, a few entries are enough
# inputs and oracles: make test runs items grouped by target, so a case comes back once per target; the
# smoke tier's all fit (73 cases, < 1 MB), a full tier's are kept as far as this many bytes of arrays
ORACLE_CACHE_BYTES = 256 << 20


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
