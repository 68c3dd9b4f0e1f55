"""Run cases on backend workers: inputs and oracle here, framework calls in the workers.

For each case the controller sends the inputs to every worker first, computes the
float64 oracle while they work, then collects each answer and hands it to the judge the
caller gave (harness.judge.verdict.Verdicts in every command): execution never imports judgement.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from harness.execution.ahead import oracle_for
from harness.execution.memory import largest, set_budget, short_of_memory, target_waves
from harness.execution.pool import Worker, run_message
from harness.execution.prefetch import MAX_AHEAD, Prefetch
from harness.execution.preloads import preload, prestart, run_templates
from harness.execution.records import Record
from harness.execution.relation_exec import (
    Deferred,
    RelationPlan,
    attach,
    collect_variants,
    keep_for_later,
    prepare_relations,
    run_deferred,
    submit_variants,
)
from harness.execution.spill import Spill
from harness.execution.warm_pool import POOL, release
from harness.model.case import Case
from harness.numerics.inputs import Inputs, make_inputs
from harness.numerics.oracle_grad import gradient_reference

# The controller's BLAS (numpy's OpenBLAS, in the oracle's einsum) on one thread while workers run: with
# its default of one thread per core it spent 8.5 CPU-s on the full corpus' inputs and oracles where one
# thread spends 5.4, and its spinning threads take cores from the workers.
ONE_BLAS_THREAD = 1
# Cases queued per worker beyond the one being judged. A lane judges its cases in order, so while one
# worker builds a sampled case (a compile: a second or more) or runs a slow one, the others may run only
# this many cases ahead and then wait. Warm `make run`, alternating on one 2-core AMD EPYC (2026-11-27):
# depth 2 192 and 190 s, depth 8 180 and 185 s; later that day depth 8 189 and 183 s, depth 32 176 and
# 158 s (the idle share of both cores in the middle of the run fell from 10-20% to 0-7%), 0 statuses differ. What it
# holds is the queued cases' inputs, in the controller and in each worker that runs them (a worker reads
# its requests ahead): at most PIPELINE_BYTES of them beyond the case being judged, so a stretch of large
# cases (28 MB of inputs for the largest of the corpus) queues fewer.
PIPELINE_DEPTH = 32
PIPELINE_BYTES = 16 << 20


def input_bytes(inputs: Inputs) -> int:
    """The size of what a worker receives for a case: its arrays."""
    arrays = [inputs.x, inputs.w, inputs.b, inputs.dy, *(a for c in inputs.epilogue for a in c.values())]
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))

Prepared = tuple[Case, Inputs, tuple | None, dict | None]  # a case, its inputs, oracle, gradient oracles
# The judge: a worker's payload for a prepared case -> its records (forward, then each gradient).
Judge = Callable[[Case, Worker, dict[str, Any], Prepared], list[Record]]
# Which targets run which case: (backend, case) -> whether it runs there (default: every case everywhere).
Select = Callable[[str, Case], bool]
# seconds a case may take: one for every target, or per target (its backend's name; `convdiff fuzz` gives a
# cheap target a shorter one, harness/commands/fuzz/pace.py Pace.timeout)
Timeout = float | Callable[[str], float]


@dataclass
class RunInfo:
    """What the run learned about its targets (for the fingerprint and skip reasons)."""

    versions: dict[str, str] = field(default_factory=dict)
    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)
    host_facts: dict[str, dict[str, Any]] = field(default_factory=dict)  # per target, from its worker
    skipped: dict[str, str] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)  # installed, but the worker did not start or setup() raised
    # per target, what its workers' batched builds (Backend.prepare) reported: counts, and "seconds", a cost
    # that is in no record's duration_s (the --shard cost table spreads it over the target's cases)
    builds: dict[str, dict[str, Any]] = field(default_factory=dict)
    # per target, the answers after which a worker retired for its memory budget (harness/execution/memory.py)
    memory_retires: dict[str, int] = field(default_factory=dict)


def prepare(case: Case) -> Prepared:
    """The controller's work for one case before any worker answers: inputs and oracles."""
    inputs = make_inputs(case)
    return case, inputs, oracle_for(case, inputs), gradient_oracle_for(case, inputs)


def prefetch(cases: Iterable[Case], max_ahead: int = MAX_AHEAD) -> Prefetch:
    return Prefetch(cases, prepare, max_ahead=max_ahead)


def gradient_oracle_for(case: Case, inputs: Inputs) -> dict[str, tuple]:
    """{gradient: (reference, scale)} for a gradient case; empty otherwise."""
    return gradient_reference(case, inputs) if case.gradient_outputs and case.geometry is not None else {}


class Lane:
    """One set of warm workers (one per backend x device) working through a list of cases."""

    def __init__(self, targets: Sequence[tuple[str, str]], relations: RelationPlan | None = None) -> None:
        self.workers = [POOL.take(b, d) or Worker(b, d) for b, d in targets]  # warm ones where kept (pytest)
        self.relations = relations  # the metamorphic relations to judge (harness/execution/relation_exec.py)
        # cases whose process relations wait for the shadow workers, per (backend, device, thread count)
        self.deferred: dict[tuple[str, str, int | None], list[Deferred]] = {}
        self.spill = Spill()  # where they wait (harness/execution/spill.py)

    def start(self, info: RunInfo, lanes: int = 1) -> None:
        """Start the workers (`lanes`: how many lanes of this size the run starts, for their memory budget)."""
        backends = [w.backend for w in self.workers]
        set_budget(len(self.workers) * lanes, len(run_templates(backends)))  # each worker's share (memory.py)
        prestart([w.backend for w in self.workers if w.proc is None and not w.fresh_only])  # imports side by side
        for w in self.workers:
            if w.proc is None:
                w.launch()
        for w in self.workers:
            if w.ready():
                info.versions[w.backend] = w.version
                info.fingerprints[w.target] = w.fingerprint
                info.host_facts[w.target] = w.host
            elif w.broken:
                info.broken[w.target] = w.reason or "unavailable"
            else:
                info.skipped[w.target] = w.reason or "unavailable"
        self.workers = [w for w in self.workers if w.reason is None]

    def run(self, cases: Iterable[Case] | Prefetch, timeout: Timeout, judge: Judge,
            sink: Callable[[Record], None], select: Select | None = None,
            plan: Sequence[Case] | None = None, depth: int | None = None) -> None:
        """Cases from a list, or drawn on demand (`convdiff fuzz`), or already being prepared.
        `plan`: the cases, when known ahead; workers whose backend builds in batches
        (Backend.batch_size) get their share first (Worker.prepare).

        Pipelined: each worker already holds the next case while this one is judged, and
        inputs and oracles are made ahead on a thread (harness/execution/prefetch.py), so the
        controller's float64 work overlaps the workers' instead of sitting between them. `depth`: how many
        cases may be in flight (a source drawn on a clock, as the fuzz's, keeps it small: what is in flight when
        its time is up still runs on every worker, the slowest included)."""
        shares = {w.target: [c for c in plan or () if select is None or select(w.backend, c)] for w in self.workers}
        for w in self.workers:
            w.send_plan(shares[w.target])  # all asked first, so they answer side by side; [] forgets a last plan
        for w in self.workers:
            w.await_plan()
            # the relations judged on each case here: their derived runs are built in the same batches
            w.prepare(shares[w.target], [self.relations.for_case(c, w.backend) if self.relations else ()
                                         for c in shares[w.target]])
        # each pending case with its workers, its input bytes and its relation runs (relation_exec.CaseRelations)
        pending: deque[tuple[Prepared, list[Worker], int, Any]] = deque()
        queued = 0  # input bytes of the pending cases after the first (the one judged next)
        depth = PIPELINE_DEPTH if depth is None else depth
        for prepared in (cases if isinstance(cases, Prefetch) else prefetch(cases)):
            chosen = [w for w in self.workers if select is None or select(w.backend, prepared[0])]
            runs = [w for w in chosen if w.declines(prepared[0]) is None]
            wire = run_message(prepared[0], prepared[1]) if runs else None
            rel = prepare_relations(self.relations, *prepared[:3], [w.backend for w in runs]) if runs else None
            for w in runs:
                w.submit(prepared[0], prepared[1], wire)
                if rel is not None:  # right behind the case: collected in finish() in the same order
                    submit_variants(w, rel, self.relation_names(rel, w))
            size = input_bytes(prepared[1])
            queued += size if pending else 0
            pending.append((prepared, chosen, size, rel))
            while len(pending) > depth or (len(pending) > 1 and queued > PIPELINE_BYTES):
                done, workers, _, done_rel = pending.popleft()
                queued -= pending[0][2]  # the next one becomes the one judged
                self.finish(done, workers, timeout, judge, sink, done_rel)
        while pending:
            done, workers, _, done_rel = pending.popleft()
            self.finish(done, workers, timeout, judge, sink, done_rel)

    def finish(self, prepared: Prepared, workers: list[Worker], timeout: Timeout, judge: Judge,
               sink: Callable[[Record], None], rel: Any = None) -> None:
        later = self.relations.deferred if self.relations is not None else ()
        shared = None  # the case's part of what the deferred relations need, spilled once for all its targets
        for w in workers:
            declined = w.declines(prepared[0])
            limit = timeout(w.backend) if callable(timeout) else timeout
            payload = declined or w.collect(limit)
            names = self.relation_names(rel, w) if rel is not None and declined is None else ()
            if names:
                payload = attach(payload, rel, collect_variants(w, rel, limit, names), names)
                mine = tuple(n for n in names if n in later)
                if mine and payload["status"] == "ok":  # the process relations: after the lane (run_deferred)
                    payload["relation_names"] = tuple(n for n in names if n not in later)
                    key = (w.backend, w.device, w.threads)
                    shared = shared or Deferred.keep(self.spill, prepared, rel)
                    own = self.spill.put(keep_for_later(payload, rel, mine))
                    self.deferred.setdefault(key, []).append(Deferred(self.spill, shared, own, mine, w))
            for rec in judge(prepared[0], w, payload, prepared):
                sink(rec)
        self.relieve()

    def relieve(self) -> None:
        """Where a memory budget is set and the machine is short of memory, retire the largest of this lane's
        workers (harness/execution/memory.py): what it had queued runs again on a fresh one."""
        if not short_of_memory():
            return
        live = {w.proc.pid: w for w in self.workers if w.proc is not None and w.preparing is None}
        biggest = largest(live)
        if biggest is not None:
            biggest.retire()

    def relation_names(self, rel: Any, w: Worker) -> tuple[str, ...]:
        """The relations of a case on this worker's backend (the plan may sample its cases per backend)."""
        assert self.relations is not None
        return tuple(n for n in self.relations.for_case(rel.case, w.backend) if n in rel.names)

    def note_builds(self, info: RunInfo) -> None:
        """Add what each worker's batched build reported to the run's (RunInfo.builds), and its retirements for
        memory (RunInfo.memory_retires), summed over lanes."""
        for w in self.workers:
            if w.memory_retires:
                info.memory_retires[w.target] = info.memory_retires.get(w.target, 0) + w.memory_retires
            if not w.prepared:
                continue
            into = info.builds.setdefault(w.target, {})
            for key, value in w.prepared.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    into[key] = round(into.get(key, 0) + value, 3)
                else:
                    into[key] = value  # an error's message

    def stop(self) -> None:
        workers, self.workers = self.workers, []  # once: run_cases stops the lanes before the deferred relations
        release(workers)


def run_cases(cases: Sequence[Case], targets: Sequence[tuple[str, str]], sink: Callable[[Record], None],
              judge: Judge, timeout: float = 60.0, jobs: int = 1, select: Select | None = None,
              relations: RelationPlan | None = None) -> RunInfo:
    """Run every case on every target (or where `select(backend, case)` says so); `judge` turns each
    answer into records, which go to `sink` as soon as they exist. `relations`: the metamorphic relations
    to judge too, and on which cases (their process relations run once the lanes are done). Where a memory
    budget is set and the targets would not fit in memory together, they run in waves (memory.target_waves):
    each wave's workers run every case and stop before the next wave starts."""
    info = RunInfo()
    lock = threading.Lock()

    def locked_sink(rec: Record) -> None:
        with lock:
            sink(rec)

    deferred: dict[tuple[str, str, int | None], list[Deferred]] = {}
    blas = threadpool_limits(ONE_BLAS_THREAD, user_api="blas")
    try:
        for wave in target_waves(list(targets), preload):
            for key, items in _run_wave(cases, wave, info, locked_sink, judge, timeout, jobs, select,
                                        relations).items():
                deferred.setdefault(key, []).extend(items)
        if deferred and relations is not None:
            run_deferred(deferred, relations.deferred, timeout, judge, locked_sink)
    finally:
        blas.restore_original_limits()
    return info


def _run_wave(cases: Sequence[Case], targets: Sequence[tuple[str, str]], info: RunInfo,
              sink: Callable[[Record], None], judge: Judge, timeout: float, jobs: int, select: Select | None,
              relations: RelationPlan | None) -> dict[tuple[str, str, int | None], list[Deferred]]:
    """Every case on these targets, in `jobs` lanes; returns the cases whose process relations wait."""
    lanes = [Lane(targets, relations) for _ in range(max(1, min(jobs, len(cases) or 1)))]
    # inputs and oracles start now, while the workers import their frameworks
    # (a known list: as far ahead as the memory budget allows, so the workers' import time is used)
    shares = [cases[i::len(lanes)] for i in range(len(lanes))]
    prepared = [prefetch(share, max_ahead=len(cases)) for share in shares]

    def work(i: int) -> None:
        lanes[i].run(prepared[i], timeout, judge, sink, select, plan=shares[i])

    try:
        for lane in lanes:
            lane.start(info, len(lanes))
        if len(lanes) == 1:
            work(0)
        else:
            threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(lanes))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        for lane in lanes:
            lane.note_builds(info)
            lane.stop()
        deferred: dict[tuple[str, str, int | None], list[Deferred]] = {}
        for lane in lanes:
            for key, items in lane.deferred.items():
                deferred.setdefault(key, []).extend(items)
        return deferred
    finally:
        for p in prepared:
            p.cancel()
        for lane in lanes:
            lane.stop()
