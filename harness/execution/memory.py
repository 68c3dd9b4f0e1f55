"""Each worker's share of the machine's memory: a worker beyond it retires after its answer, and a fresh one goes on.

A run keeps one worker per target alive for all its cases, and each grows as it runs them (compiled programs,
framework caches). On 2026-11-30, on a 2-core AMD EPYC Zen 4 with 24 GiB, a quarter of the nightly
(`convdiff run --shard 1/4 --tier full --gradients --relations all`, 34 targets, 374 cases) held 9 GB once its
workers and their zygotes had started, and after 64 minutes the kernel's OOM killer ended it: the process it
killed was the controller (1.5 GB resident, the largest), so the run stopped there, with 39,699 results streamed
to disk. A 32nd of the night (44 cases) grew by about 1 GB and never came near.

The budget of one worker is CONVDIFF_WORKER_MB: a number of MB, or `auto` (what the nightly sets): WORKER_SHARE
of the memory available when the run starts (MemAvailable) over the run's workers, at least MIN_MB. Unset or 0,
there is none: `make test` keeps its workers warm from one test to the next and runs few cases on each, and the
nightly is the run whose workers grow that far. After each case a worker reads its
proportional set size (Pss: its private pages and its share of those it shares with its zygote, so that the
workers' figures add up to what they take); above the budget, and grown by half the budget since it was set up,
it marks its answer `retire` and exits, and the
pool forks a fresh one for the cases queued behind it, as after a refusal that leaves stale state (pool.py).
The answer itself is kept. What a fresh worker loses is what it held in memory: builds are on disk (TVM's
cache, ExecuTorch's and IREE's batches), so it loads them instead of building again.

`auto` counts more than the workers: the controller's own peak (CONTROLLER_MB, set by the largest drift case's
float64 oracle) comes off the available memory first, and each zygote the run forks from counts as one more
worker, since a zygote holds a framework's import as a started worker does.

A budget per worker cannot see the rest of the machine: the quarter above ran out of memory with `auto` set
too (at 79.5 minutes, on a 2-core Intel Xeon with 24 GiB, 2026-11-30), its workers, zygotes and the controller
holding about 20 GB together. So where a budget is set, the controller also watches the whole machine: after
each case it reads MemAvailable, and below the floor (FLOOR_SHARE of MemTotal, or CONVDIFF_MEMORY_FLOOR_MB) it
retires the largest of its workers at once (short_of_memory, largest; runner.Lane.relieve). The cases that
worker had queued go to a fresh one, as after a crash, but without a spare process and without a crash record.

Neither sees the build phase: the targets that compile in batches build all the run's cases before their first
answer, all at once, while the others run every case ahead. On 2026-11-30 (same host) models/deeplabv3_resnet50.yaml
alone with gradients and every relation on all 35 targets held 21.4 GB after 20 minutes, before any case was
judged (five TVM workers at 1.0-1.3 GB resident each, building). So where a budget is set, a run whose targets
would not fit runs them in waves (target_waves): a wave's workers run every case, then stop, and the next wave
starts. A wave holds at most what WAVE_WORKER_MB per target allows of the same memory as `auto`
(CONVDIFF_TARGETS_AT_ONCE overrides it), and a framework's targets go into one wave where they fit, so that
they share its zygote.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

ENV = "CONVDIFF_WORKER_MB"
AUTO = "auto"  # the share below; unset or 0: no budget
WORKER_SHARE = 0.8  # of MemAvailable at the start, over the run's workers
MIN_MB = 384  # a budget below this would retire most workers after every case (a started one takes 150-400 MB)
# The controller's peak in MB, kept out of `auto`: 2,374 and 2,272 MB on conv3d + conv_transpose3d + drift with
# gradients and every relation (2-core Intel Xeon, 2026-11-30); 2.2 GB when the quarter above was killed.
CONTROLLER_MB = 2560
FLOOR_ENV = "CONVDIFF_MEMORY_FLOOR_MB"
WAVE_ENV = "CONVDIFF_TARGETS_AT_ONCE"
# A started target's peak with its share of its zygote, in MB: 21.4 GB for 35 targets building the deeplabv3
# layers above (about 610 each), 17.7 GB for 35 when the quarter was killed (about 510); with headroom.
WAVE_WORKER_MB = 700
FLOOR_SHARE = 0.15  # of MemTotal: below this much available, the largest worker retires (where a budget is set)
T = TypeVar("T")

_budget_mb = 0  # set by the controller for the workers it starts (set_budget); 0: none


def _meminfo_mb(field: str) -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def budget_mb(workers: int, zygotes: int = 0) -> int:
    """One worker's budget in MB for a run of `workers` workers forked from `zygotes` zygotes (the module doc);
    0 where there is none."""
    value = os.environ.get(ENV, "").strip()
    if value != AUTO:
        try:
            return max(int(value or 0), 0)
        except ValueError:
            return 0
    available = _meminfo_mb("MemAvailable")
    if available is None or workers < 1:
        return 0
    return max(int(WORKER_SHARE * (available - CONTROLLER_MB) / (workers + max(zygotes, 0))), MIN_MB)


def set_budget(workers: int, zygotes: int = 0) -> int:
    """The controller: the budget of the workers it starts from now on, for a run of `workers` workers forked
    from `zygotes` zygotes."""
    global _budget_mb
    _budget_mb = budget_mb(workers, zygotes)
    return _budget_mb


def targets_at_once(targets: int) -> int:
    """How many targets one wave of a run starts (target_waves): all of them where no budget is set."""
    value = os.environ.get(WAVE_ENV, "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    if os.environ.get(ENV, "").strip() in ("", "0") or not budget_mb(max(targets, 1)):
        return max(targets, 1)
    available = _meminfo_mb("MemAvailable")
    if available is None:
        return max(targets, 1)
    return max(int(WORKER_SHARE * (available - CONTROLLER_MB) / WAVE_WORKER_MB), 1)


def target_waves(targets: list[tuple[str, str]], family: Callable[[str], object]) -> list[list[tuple[str, str]]]:
    """The targets in waves of at most targets_at_once(), as few and as even as that allows; a `family` (what a
    backend's zygote imports) goes whole into the emptiest wave where it fits, else is split. One wave, in the
    given order, where all fit."""
    at_once = targets_at_once(len(targets))
    if at_once >= len(targets):
        return [list(targets)]
    count = -(-len(targets) // at_once)
    size = -(-len(targets) // count)  # even waves: 35 at 21 a wave -> 18 and 17, not 21 and 14
    families: dict[str, list[tuple[str, str]]] = {}
    for t in targets:
        families.setdefault(str(family(t[0])), []).append(t)
    waves: list[list[tuple[str, str]]] = [[] for _ in range(count)]
    for members in sorted(families.values(), key=len, reverse=True):
        fits = [w for w in waves if len(w) + len(members) <= size]
        if fits:
            min(fits, key=len).extend(members)
            continue
        for t in members:  # larger than any room left: its targets fill the emptiest waves one by one
            min(waves, key=len).append(t)
    return [w for w in waves if w]


def floor_mb() -> float:
    """How much memory must stay available before the controller retires a worker (the module doc): 0 where no
    budget is set (the floor comes with it), else CONVDIFF_MEMORY_FLOOR_MB or FLOOR_SHARE of MemTotal."""
    if not _budget_mb:
        return 0.0
    try:
        return max(float(os.environ[FLOOR_ENV]), 0.0)
    except (KeyError, ValueError):
        total = _meminfo_mb("MemTotal")
        return FLOOR_SHARE * total if total is not None else 0.0


def short_of_memory() -> bool:
    """In the controller: whether the machine's available memory is below the floor."""
    floor = floor_mb()
    available = _meminfo_mb("MemAvailable") if floor > 0 else None
    return available is not None and available < floor


def largest(pids: dict[int, T]) -> T | None:
    """Of {pid: owner}, the owner whose process has the largest Pss (None where /proc says nothing)."""
    sizes = {pid: pss_mb(pid) for pid in pids}
    known = {pid: mb for pid, mb in sizes.items() if mb is not None}
    return pids[max(known, key=lambda pid: known[pid])] if known else None


def worker_env() -> dict[str, str]:
    """What a worker's environment gets (pool.Worker._spawn): its budget, where there is one."""
    return {ENV: str(_budget_mb)} if _budget_mb else {}


def own_pss_mb() -> float | None:
    """This process's proportional set size in MB (None where /proc does not say)."""
    return pss_mb("self")


def _rollup_mb(pid: int | str) -> dict[str, float]:
    """A process's /proc/<pid>/smaps_rollup totals in MB ({} where /proc does not say, or it is gone)."""
    sizes: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if rest.strip().endswith("kB"):
                    sizes[name] = int(rest.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        return {}
    return sizes


def pss_mb(pid: int | str) -> float | None:
    """A process's proportional set size in MB (None where /proc does not say, or it is gone)."""
    return _rollup_mb(pid).get("Pss")


def _private_mb(sizes: dict[str, float]) -> float | None:
    return sizes["Private_Clean"] + sizes["Private_Dirty"] if "Private_Dirty" in sizes else None


def worker_start_mb() -> float | None:
    """In a worker once set up, where a budget is set: the memory it holds alone (private pages), which
    `over_budget` measures its growth from; None without a budget."""
    return _private_mb(_rollup_mb("self")) if os.environ.get(ENV) else None


def over_budget(start_mb: float | None) -> bool:
    """In a worker: whether it is beyond the budget its controller gave it (its Pss) and has grown by half the
    budget since `start_mb` (worker_start_mb). A worker that starts beyond the budget (a fresh interpreter holds
    its framework alone, with no zygote to share it with) would otherwise retire after every case. The growth is
    of its private pages, not of its Pss: the pages it shares with its zygote count in its Pss divided among the
    processes sharing them, so its Pss grows or shrinks as sibling workers of the same zygote exit or start (in an
    xdist session, one zygote serves every process: the likely cause of a make test run, 2026-12-02, in which a
    torch worker over a 1 MB budget never retired)."""
    try:
        budget = int(os.environ.get(ENV) or 0)
    except ValueError:
        return False
    sizes = _rollup_mb("self") if budget > 0 else {}
    pss, private = sizes.get("Pss"), _private_mb(sizes)
    grown = start_mb is None or private is None or private - start_mb > budget / 2
    return pss is not None and pss > budget and grown
