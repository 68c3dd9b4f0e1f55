"""Running a case's relation variants (harness/numerics/relations.py) on workers.

The variants of process `main` go to the case's own worker right behind the case, pipelined like any case,
and come back in the case's payload (`payload["relations"]`, one sub-payload per run). Those of `second`,
`threads` and `kernels` run after the lane is done, on shadow workers of the target (`Shadows`), each started
on first use: a fresh worker with the run's own settings (determinism across processes); one started with
CONVDIFF_THREADS, which the worker hands to Backend.set_threads before setup (a thread count other than the
main worker's: 1, or every core where the framework's default is 1); and one per kernel variant the adapter
declares (Backend.kernel_variants, given the main worker's live host facts), started with CONVDIFF_KERNELS,
which the worker hands to Backend.use_kernel_variant before setup, and with the variant's own environment (a
fresh interpreter then: the framework reads it at import). A `kernels` run comes back once per variant, as
`kernels:<name>`; a target without variants answers it `unsupported`, with the adapter's reason. Each run
comes back with the live host facts of the worker that ran it (`host`): the judge matches a run's known issues
under them (a kernel variant's process setting changes what its framework decides). The judge
sees the payload with every run it needs, and the names of the relations to judge
(`payload["relation_names"]`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from backends.base import HostFact, KernelVariant, Unsupported, first_line
from backends.registry import get_backend
from harness.execution.pool import Worker, run_message, stop_all
from harness.execution.spill import Ref, Spill
from harness.execution.worker import KERNELS_ENV, THREADS_ENV, unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.relation_pairs import needed
from harness.numerics.relations import PROCESS_RELATIONS, Variant, applies, variants

# targets whose shadow workers run the deferred relations at once: one per core (each runs up to three processes,
# which mostly wait on each other's answers)
DEFERRED_AT_ONCE = max(1, os.cpu_count() or 1)


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


def kernel_variants(backend: str, host: dict[str, HostFact]) -> tuple[tuple[KernelVariant, ...], str]:
    """The target's kernel variants (Backend.kernel_variants, read in this process: no framework import), and
    why it has none where it has none."""
    try:
        found = tuple(get_backend(backend).kernel_variants(host))
    except Unsupported as exc:
        return (), str(exc)
    except Exception as exc:  # noqa: BLE001 - an adapter bug costs its variants, not the run
        return (), f"{backend}: kernel_variants() raised {first_line(exc)}"
    return found, "" if found else f"{backend} declares no kernel variants"


class Shadows:
    """The extra workers of one target for the process relations, each started on first use: `second`,
    `threads`, and `kernels:<name>` per kernel variant."""

    def __init__(self, backend: str, device: str, main_threads: int | None,
                 host: dict[str, HostFact] | None = None) -> None:
        self.main_threads = main_threads
        # another count than the main worker's: 1 thread, or every core where the framework's default is 1
        self.n = max(2, cores()) if main_threads == 1 else 1
        self.workers = {"second": Worker(backend, device),
                        "threads": Worker(backend, device, env={THREADS_ENV: str(self.n)})}
        self.variants, self.kernels_reason = kernel_variants(backend, host or {})
        for v in self.variants:
            w = Worker(backend, device, env={KERNELS_ENV: v.name, **dict(v.env)})
            w.fresh_only = w.fresh_only or bool(v.env)  # read at import: never a fork of a process without them
            self.workers[f"kernels:{v.name}"] = w
        self.started: set[str] = set()

    def _start(self, names: list[str]) -> None:
        new = [self.workers[n] for n in names if n not in self.started]
        for w in new:
            w.launch()
        for w in new:
            w.ready()
        self.started.update(names)

    def run(self, rel: CaseRelations, timeout: float, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """Sub-payloads of the `second`, `threads` and `kernels` runs the relations `names` need (an unavailable
        or setting-less worker: the reason, as the runs' status), a `kernels` run once per variant."""
        keys = {p: rel.keys(p, names) for p in ("second", "threads", "kernels")}
        out: dict[str, dict[str, Any]] = {}
        if keys["kernels"] and not self.variants:
            out.update({key: unsupported(self.kernels_reason) for key in keys["kernels"]})
        wanted = [w for w in self.workers if keys[w.partition(":")[0]]]
        self._start(wanted)
        sent: list[tuple[str, Worker]] = []
        for process in wanted:
            w, kind, variant = self.workers[process], *process.partition(":")[::2]
            for key in keys[kind]:
                got = f"{key}:{variant}" if variant else key
                if kind == "threads" and w.threads_reason:
                    out[got] = unsupported(w.threads_reason)
                elif kind == "kernels" and w.kernels_reason:
                    out[got] = unsupported(w.kernels_reason)
                elif w.reason:
                    out[got] = {"status": "error" if w.broken else "unsupported", "duration_s": 0.0,
                                "message": f"the {process} worker: {w.reason}"}
                else:
                    w.submit(rel.runs[key].case, rel.runs[key].inputs)
                    sent.append((got, w))
        for got, w in sent:  # with the facts its worker decided (a kernel variant's own: tf_onednn under =0)
            out[got] = {**w.collect(timeout), "host": dict(w.host)} if w.host else w.collect(timeout)
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
    """A judged case whose process relations wait for the shadow workers. What they need lies in `spill`
    until then (harness/execution/spill.py): `shared` the case's (prepared inputs and oracle, relation runs),
    one copy for all its targets; `own` this target's answer."""

    spill: Spill
    shared: Ref
    own: Ref
    names: tuple[str, ...]  # the deferred relations this case has on this target
    main: Worker | None = None  # the case's own worker (stopped by now): its version and live host facts

    @staticmethod
    def keep(spill: Spill, prepared: tuple, rel: CaseRelations) -> Ref:
        """The case's part, spilled once for all its targets (without the main-process runs' messages: sent)."""
        return spill.put((prepared, replace(rel, wires={})))

    def load(self) -> tuple[tuple, dict[str, Any], CaseRelations]:
        prepared, rel = self.spill.get(self.shared)
        return prepared, self.spill.get(self.own), rel


def run_deferred(deferred: dict[tuple[str, str, int | None], list[Deferred]], names: tuple[str, ...], timeout: float,
                 judge: Callable[..., list], sink: Callable[[Any], None]) -> None:
    """For each target (backend, device, its main worker's thread count): its shadow workers run the deferred
    cases' `second`, `threads` and `kernels` variants, then the judge gives the records of `names` for each.
    DEFERRED_AT_ONCE targets at a time (their shadows are processes of their own; `sink` takes records from
    several threads, as from the lanes)."""

    def one(target: tuple[str, str, int | None], items: list[Deferred]) -> None:
        backend, device, threads = target
        main = next((d.main for d in items if d.main is not None), None)
        shadows = Shadows(backend, device, threads, main.host if main is not None else None)
        try:
            for d in items:
                mine = tuple(n for n in d.names if n in names)
                prepared, kept, rel = d.load()
                subs = shadows.run(rel, timeout, mine)
                payload = {**attach(kept, rel, subs, mine),
                           "only_relations": True, "threads_note": shadows.threads_note}
                for rec in judge(prepared[0], d.main or shadows.workers["second"], payload, prepared):
                    sink(rec)
        finally:
            shadows.stop()

    try:
        with ThreadPoolExecutor(DEFERRED_AT_ONCE) as pool:
            for done in [pool.submit(one, target, items) for target, items in deferred.items()]:
                done.result()
    finally:
        for spill in {id(d.spill): d.spill for items in deferred.values() for d in items}.values():
            spill.close()


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
