"""Running a case's relation variants (harness/numerics/relations.py) on workers.

The variants of process `main` go to the case's own worker right behind the case, pipelined like any case,
and come back in the case's payload (`payload["relations"]`, one sub-payload per run). Those of `second` and
`threads` run after the lane is done, on two shadow workers per target (`Shadows`): a fresh worker with the
run's own settings (determinism across processes) and one started with CONVDIFF_THREADS, which the worker
hands to Backend.set_threads before setup (a thread count other than the main worker's: 1, or every core
where the framework's default is 1). The judge sees the payload with every run it needs, and the names of
the relations to judge (`payload["relation_names"]`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.execution.pool import Worker, run_message, stop_all
from harness.execution.worker import THREADS_ENV, unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.relation_pairs import needed
from harness.numerics.relations import PROCESS_RELATIONS, Variant, applies, variants


@dataclass
class RelationPlan:
    """Which relations a run judges, and where: `chosen(backend, case)` (a fixed sample, which may be sparser
    on the backends that build a model per case: every derived run is a build there); None: everywhere."""

    names: tuple[str, ...]
    chosen: Callable[[str, Case], bool] | None = None

    def for_case(self, case: Case, backend: str | None = None) -> tuple[str, ...]:
        """The relations for the case on `backend` (None: on any backend that runs it)."""
        if not self.names or (self.chosen is not None and backend is not None and not self.chosen(backend, case)):
            return ()
        return tuple(n for n in self.names if applies(case, n))

    @property
    def deferred(self) -> tuple[str, ...]:
        """The relations judged after the lane, once the shadow workers have run."""
        return tuple(n for n in self.names if n in PROCESS_RELATIONS)


@dataclass
class CaseRelations:
    """A case's relations and the runs they need, each pickled once for every worker that runs it."""

    case: Case
    names: tuple[str, ...]
    runs: dict[str, Variant]
    wires: dict[str, bytes] = field(default_factory=dict)

    def keys(self, process: str, names: tuple[str, ...] | None = None) -> list[str]:
        """The runs of `process` the relations `names` (default: all of the case's) need, in a fixed order."""
        want = None if names is None else {k for n in names for k in needed(n, self.case, self.runs)}
        return [k for k, v in self.runs.items() if v.process == process and (want is None or k in want)]


def prepare_relations(plan: RelationPlan | None, case: Case, inputs: Inputs, oracle: tuple | None,
                      backends: list[str] | None = None) -> CaseRelations | None:
    """The runs of the relations the plan gives the case on any of `backends` (None: on any backend)."""
    if plan is None:
        return None
    found = [plan.for_case(case, b) for b in backends] if backends is not None else [plan.for_case(case)]
    names = tuple(n for n in plan.names if any(n in f for f in found))
    if not names:
        return None
    runs = variants(case, inputs, oracle, names)
    return CaseRelations(case, names, runs, {k: run_message(v.case, v.inputs) for k, v in runs.items() if v.process == "main"})


def submit_variants(worker: Worker, rel: CaseRelations, names: tuple[str, ...]) -> None:
    for key in rel.keys("main", names):
        worker.submit(rel.runs[key].case, rel.runs[key].inputs, rel.wires.get(key))


def collect_variants(worker: Worker, rel: CaseRelations, timeout: float, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The sub-payloads of the main-process variants, in the order submit_variants sent them."""
    return {key: worker.collect(timeout) for key in rel.keys("main", names)}


def attach(payload: dict[str, Any], rel: CaseRelations, subs: dict[str, dict[str, Any]],
           names: tuple[str, ...]) -> dict[str, Any]:
    """The case's payload with its relation runs and the relations to judge now."""
    return {**payload, "relations": {**payload.get("relations", {}), **subs}, "relation_runs": rel.runs,
            "relation_names": names}


def keep_for_later(payload: dict[str, Any], rel: CaseRelations, names: tuple[str, ...]) -> dict[str, Any]:
    """What the deferred relations need of a judged payload: their runs' sub-payloads only (memory)."""
    keys = {k for n in names if n in rel.names for k in needed(n, rel.case, rel.runs)}
    return {**payload, "relations": {k: v for k, v in payload.get("relations", {}).items() if k in keys}}


def cores() -> int:
    return len(os.sched_getaffinity(0))


class Shadows:
    """The two extra workers of one target for the process relations; started on first use."""

    def __init__(self, backend: str, device: str, main_threads: int | None) -> None:
        self.main_threads = main_threads
        # another count than the main worker's: 1 thread, or every core where the framework's default is 1
        self.n = max(2, cores()) if main_threads == 1 else 1
        self.workers = {"second": Worker(backend, device),
                        "threads": Worker(backend, device, env={THREADS_ENV: str(self.n)})}
        self.started = False

    def _start(self) -> None:
        if not self.started:
            for w in self.workers.values():
                w.launch()
            for w in self.workers.values():
                w.ready()
            self.started = True

    def run(self, rel: CaseRelations, timeout: float, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """Sub-payloads of the `second` and `threads` runs the relations `names` need (an unavailable or
        setting-less worker: the reason, as the runs' status)."""
        self._start()
        sent: list[tuple[str, Worker]] = []
        out: dict[str, dict[str, Any]] = {}
        for process, w in self.workers.items():
            for key in rel.keys(process, names):
                if process == "threads" and w.threads_reason:
                    out[key] = unsupported(w.threads_reason)
                elif w.reason:
                    out[key] = {"status": "error" if w.broken else "unsupported", "duration_s": 0.0,
                                "message": f"the {process} worker: {w.reason}"}
                else:
                    w.submit(rel.runs[key].case, rel.runs[key].inputs)
                    sent.append((key, w))
        for key, w in sent:
            out[key] = w.collect(timeout)
        return out

    @property
    def threads_note(self) -> str:
        """`1 thread (in effect: 1) against the default, 2`: what was asked, what the framework reports."""
        default = "the default" if self.main_threads is None else f"the default, {self.main_threads}"
        many = f"{self.n} threads" if self.n > 1 else "1 thread"
        got = self.workers["threads"].threads
        return f"{many}{'' if got is None else f' (in effect: {got})'} against {default}"

    def stop(self) -> None:
        stop_all(list(self.workers.values()))


@dataclass
class Deferred:
    """A judged case whose process relations wait for the shadow workers."""

    prepared: tuple
    payload: dict[str, Any]
    rel: CaseRelations
    names: tuple[str, ...]  # the deferred relations this case has on this target


def run_deferred(deferred: dict[tuple[str, str, int | None], list[Deferred]], names: tuple[str, ...], timeout: float,
                 judge: Callable[..., list], sink: Callable[[Any], None]) -> None:
    """For each target (backend, device, its main worker's thread count): its shadow workers run the deferred
    cases' `second` and `threads` variants, then the judge gives the records of `names` for each."""
    for (backend, device, threads), items in deferred.items():
        shadows = Shadows(backend, device, threads)
        try:
            for d in items:
                mine = tuple(n for n in d.names if n in names)
                subs = shadows.run(d.rel, timeout, mine)
                payload = {**attach(d.payload, d.rel, subs, mine),
                           "only_relations": True, "threads_note": shadows.threads_note}
                for rec in judge(d.prepared[0], shadows.workers["second"], payload, d.prepared):
                    sink(rec)
        finally:
            shadows.stop()


def run_relations(worker: Worker, shadows: Callable[[], Shadows] | None, case: Case, inputs: Inputs,
                  oracle: tuple | None, names: tuple[str, ...], timeout: float,
                  payload: dict[str, Any]) -> dict[str, Any]:
    """One case's relations at once, outside a lane (the pytest plugin): the main-process runs on `worker`,
    the others on the target's shadow workers (made by `shadows` on first use); `payload`: the case's own
    answer. The payload the judge reads for every relation in `names`."""
    rel = prepare_relations(RelationPlan(names), case, inputs, oracle)
    if rel is None or payload["status"] != "ok":
        return {**payload, "relation_names": names}
    submit_variants(worker, rel, rel.names)
    subs = collect_variants(worker, rel, timeout, rel.names)
    note = ""
    if shadows is not None and any(v.process != "main" for v in rel.runs.values()):
        target = shadows()
        subs.update(target.run(rel, timeout, rel.names))
        note = target.threads_note
    return {**attach(payload, rel, subs, rel.names), "threads_note": note}
