"""Which targets run which generated case: the slow targets a share of the cases, so that they do not set the pace.

A compiled path (ExecuTorch, IREE, inductor, the ONNX converters, TVM) builds a model per case, which takes
seconds where an eager framework takes milliseconds. Run on every case, they held a 10-minute fuzz of all 35
targets to 105 cases (seed 7, 2026-11-29, 2-core AMD EPYC Zen 4), and every eager target to the same 105.

`Pace` measures each target's seconds per case from its results (`duration_s` of the forward result, its
gradients and its relations) and gives each target a credit: every drawn case adds min(1, cap / cost), where
cap is SLOW_FACTOR times the reference cost, and running a case spends 1. The reference is the cost at
REFERENCE_QUANTILE of the targets' costs, the cheapest third: the eager frameworks and the direct operator
calls, whose milliseconds let them run many times the cases a build per case allows. A target at or below
the cap runs every case; one ten times the reference runs about SLOW_FACTOR / 10 of them, spread evenly over
the run. With the median as the reference, half of the 35 targets ran every case at 0.1 to 0.3 s each, and
so every target, the eager ones included, saw only 154 cases in a 180 s fuzz of seed 7; with the cheapest
third, 594 (2026-11-29, 2-core AMD EPYC Zen 4; what a fuzz finds grows with the cases its cheap targets see,
bench/fuzz_share.py). A target is not held back while its cost is under MIN_PACED_S (the eager
frameworks' calls, inflated by a busy machine, stay under it), nor
before it has WARMUP results, except one that says it builds a model per case (`builds_per_case`: `slow`):
that one runs the first WARMUP cases and then waits for their costs, where it would otherwise be handed every
case drawn while its first builds run. A steered neighbour (steer.py) always runs on the targets whose failure
anchored it: it tests that failure's boundary.

Which cases a slow target runs: those that add most to its pairwise coverage. Each case has a few coarse
traits (`traits`: op, dtype, layout, valid or not, the generator's focus (a boundary or an invalid class),
groups kind, padding kind, bias, the epilogue's first two ops, gradients); a slow target keeps up to BANK
credits and spends one on a case that shows it more pairs of trait values it has not run yet than the median
of the last RECENT cases offered to it would have, or on any case once its credits reach BANK. Its share of
the cases stays what its cost allows; which ones it gets covers more combinations (paddle-inference, IREE and
the ONNX converters fail on epilogue, dtype and groups combinations that an even share left unrun). Any
unseen pair, rather than more than usual, decided nothing: early on nearly every case shows one, and at a
share of 1 in 17 the chosen cases covered fewer pairs than every 17th case.

A target's invalid cases have their own share and credit, at their own cost: a compiled path refuses most of them
before it builds anything (in a 10-minute fuzz of seed 11, 2026-11-30, 2-core Intel Xeon with AMX: ExecuTorch
0.019 s an invalid case against 4.3 s a valid one, tf-xla 0.023 against 0.38, tvm-tflite-import 0.003 against
0.18), so the target's one cost rationed them like its builds: ExecuTorch ran 4 of 470. The valid cases keep the
share of the target's cost over both kinds (paced by the valid cases' cost alone, the slowest targets ran a third
of the valid builds they had run, for the same share of the database found). Each kind's first WARMUP cases run,
and a slow target then waits for their costs; until the invalid cases have WARMUP results, the target's cost
stands in. IREE compiles an invalid case as it does a valid one (2.0 s each): nothing changes for it.

A case the target gives back `unsupported` (a dtype it has no kernel for, a layout it cannot state) spends its
credit and counts in its cost (at its few milliseconds) like any other: its cost per case is then what a drawn
case costs it, which is what its share must follow. Leaving such cases out of the cost and giving their credit
back made a cheap target that refuses most cases look slow (the torch-ao targets, 91% unsupported: 0.003 s a
drawn case, 0.05 to 0.09 s a run one): they were paced, and a 10-minute fuzz (seed 7, 2026-11-30, 2-core AMD
EPYC Zen 4) ran 1,283 cases instead of 1,771 and lost the quantized entries they had found. The summary counts
them apart (`unsupported`).

A case that hangs stalls the whole fuzz: the controller collects each case's answers in turn, so once the cases
in flight are used up every target waits for the hung one (twice: a timeout is retried on a fresh worker). With
--timeout 30 for every target, two hangs of torch-ao-qnnpack (0.035 s a case) took 120 s of a 600 s fuzz (seed 7,
2026-11-30, 2-core AMD EPYC Zen 4). `timeout` gives a target whose cost is known HANG_FACTOR times its cost per
case, at least HANG_FLOOR_S: 10 s for the eager frameworks. Not a target that builds a model per case: its
mean mixes members of a batched build, cache hits and refusals (milliseconds each) with builds of 5 to 30 s, so
it says nothing about the next build. ExecuTorch's first three cases (seed 7, 2026-11-30, 2-core Intel Xeon
with AMX) came from one batched program in 0.17 s or less, its next build was killed at the 10 s floor twice
(a timeout, its worker restarted), and the fuzz stalled for 150 s on it; such a target keeps --timeout.

Which case a slow target runs follows the measured costs, so it differs between hosts and between two runs of
one seed, as the steered draws do; the generated cases themselves are the seed's.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable, Collection, Sequence

from harness.execution.records import Record
from harness.model.case import Case

SLOW_FACTOR = 2.0  # a target's cost per case above this multiple of the reference: it runs a share
WARMUP = 3  # results before a target's cost is trusted
MIN_PACED_S = 0.1  # a cost per case below this never holds a target back
REFERENCE_QUANTILE = 0.3  # the reference cost: the cheapest third of the targets
BANK = 2.0  # credits a slow target may hold while it waits for a case with more unseen pairs of traits than usual
RECENT = 16  # the cases offered lately whose counts of unseen pairs set what is usual
HANG_FACTOR, HANG_FLOOR_S = 20.0, 10.0  # a case on a target whose cost is known: a hang after 20x it, 10 s at least


def traits(case: Case) -> tuple[str, ...]:
    """Coarse values of what decides a conv bug, one per trait (pairs of them are a slow target's coverage)."""
    groups = ("ungrouped" if case.groups == 1 else
              "depthwise" if case.groups == case.in_channels and case.out_channels % case.groups == 0 else "grouped")
    padding = case.padding if isinstance(case.padding, str) else (
        "explicit" if any(a or b for a, b in case.padding) else "zero")
    focus = next((t for t in case.tags if t != "fuzz"), "")  # the generator's boundary or invalid class (gen.py)
    epilogue = (*case.epilogue[:2], "", "")[:2]
    return (f"op={case.op}", f"dtype={case.dtype}", f"layout={case.layout}", f"expect={case.expect}", f"focus={focus}",
            f"groups={groups}", f"padding={padding}", f"bias={case.bias}", f"epi0={epilogue[0]}",
            f"epi1={epilogue[1]}", f"grad={case.gradients}")


def reference(costs: Sequence[float]) -> float:
    """The cost a slow target's share is measured against: the one at REFERENCE_QUANTILE of the sorted costs."""
    ordered = sorted(costs)
    return ordered[int(REFERENCE_QUANTILE * (len(ordered) - 1))]


def pairs(case: Case) -> set[tuple[str, str]]:
    t = traits(case)
    return {(a, b) for i, a in enumerate(t) for b in t[i + 1:]}


class Pace:
    """The fuzz's `select(backend, case)` for Lane.run (the module doc), fed every result by `record`."""

    def __init__(self, backends: Sequence[str], pinned: Callable[[str], Collection[str]] = lambda case_id: (),
                 slow: Collection[str] = ()) -> None:
        self.spent = dict.fromkeys(backends, 0.0)
        self.results = Counter[str]()
        self.kind_spent = Counter[tuple[str, bool]]()  # per (target, invalid): seconds and forward results
        self.kind_results = Counter[tuple[str, bool]]()
        self.kind_ran = Counter[tuple[str, bool]]()
        self.credit: dict[tuple[str, bool], float] = {(b, k): 0.0 for b in backends for k in (False, True)}
        self.ran = Counter[str]()
        self.skipped = Counter[str]()
        self.unsupported = Counter[str]()  # of the cases it ran, those it gave back unsupported
        self.covered: dict[str, set[tuple[str, str]]] = {b: set() for b in backends}
        # the unseen pairs each recent case would have shown a slow target: it runs one above their median
        self.offered: dict[tuple[str, bool], deque[int]] = {k: deque(maxlen=RECENT) for k in self.credit}
        self.pinned, self.slow = pinned, set(slow)
        self.lock = threading.Lock()

    def record(self, rec: Record) -> None:
        with self.lock:
            if rec.backend not in self.spent:
                return
            if rec.output == "out" and rec.status == "unsupported":
                self.unsupported[rec.backend] += 1  # counted as run: the module doc says why
            kind = (rec.backend, (getattr(rec, "params", None) or {}).get("expect") == "invalid")
            self.spent[rec.backend] += rec.duration_s or 0.0
            self.kind_spent[kind] += rec.duration_s or 0.0
            if rec.output == "out":
                self.results[rec.backend] += 1
                self.kind_results[kind] += 1

    def cost(self, backend: str, invalid: bool = False) -> float | None:
        """Seconds per case so far over both kinds (None before WARMUP results); with `invalid`, of its invalid cases
        once they have WARMUP results."""
        if invalid and (n := self.kind_results[(backend, True)]) >= WARMUP:
            return self.kind_spent[(backend, True)] / n
        n = self.results[backend]
        return self.spent[backend] / n if n >= WARMUP else None

    def timeout(self, backend: str, cap: float) -> float:
        """The seconds a case may take on the target: HANG_FACTOR x its cost per case, at least HANG_FLOOR_S, at
        most `cap` (--timeout; also before its cost is known). The controller waits for each case's answers in
        turn, so a hang stalls every target while it lasts (the module doc). A target that builds a model per case
        (`slow`) always gets `cap`: the module doc says why."""
        cost = self.cost(backend)
        if cost is None or backend in self.slow:
            return cap
        return min(cap, max(HANG_FLOOR_S, HANG_FACTOR * cost))

    def backlog(self) -> float:
        """The seconds the busiest target still needs for the cases handed to it and one more: on each target,
        (cases it was given without a result yet + 1) x its cost per case; the largest (0 before any is known).
        What the cases already drawn, and the next one, may still take on a slow target when the time is up."""
        with self.lock:
            return max(((self.ran[b] - self.results[b] + 1) * c for b in self.spent
                        if (c := self.cost(b)) is not None), default=0.0)

    def share(self, backend: str, invalid: bool = False) -> float:
        """The share of the cases the target runs at its present cost; of its invalid cases, at their own cost."""
        costs = [c for c in (self.cost(b) for b in self.spent) if c is not None]
        mine = self.cost(backend, invalid)
        if mine is None or mine < MIN_PACED_S or not costs:
            return 1.0
        return min(1.0, SLOW_FACTOR * reference(costs) / mine)

    def select(self, backend: str, case: Case) -> bool:
        with self.lock:
            kind = (backend, case.expect == "invalid")
            if kind not in self.credit:
                return True
            if self.kind_ran[kind] < WARMUP:
                share = 1.0  # the kind's first cases: its cost is measured on them
            elif backend in self.slow and self.kind_results[kind] < WARMUP:
                share = 0.0  # its first builds still running: their cost is not known yet
            else:
                share = self.share(*kind)
            if share >= 1.0:
                self.credit[kind] = 1.0
                run = True
            else:
                self.credit[kind] = min(self.credit[kind] + share, BANK)
                new = len(pairs(case) - self.covered[backend])
                offered = self.offered[kind]
                usual = sorted(offered)[len(offered) // 2] if offered else 0  # the median of the recent offers
                offered.append(new)
                run = ((self.credit[kind] >= 1.0 and (new > usual or self.credit[kind] >= BANK))
                       or backend in self.pinned(case.id))
            if run:
                self.covered[backend] |= pairs(case)
                self.credit[kind] = max(self.credit[kind] - 1.0, 0.0)
                self.ran[backend] += 1
                self.kind_ran[kind] += 1
            else:
                self.skipped[backend] += 1
            return run

    def summary(self) -> dict[str, dict[str, float | int]]:
        """Per target: cases run and left out, and seconds per case (the fuzz section of summary.json)."""
        with self.lock:
            return {b: {"cases": self.ran[b], "left_out": self.skipped[b], "unsupported": self.unsupported[b],
                        "s_per_case": round(self.spent[b] / max(self.results[b], 1), 3),
                        "s_per_invalid_case": round(self.kind_spent[(b, True)] / max(self.kind_results[(b, True)], 1),
                                                    3)} for b in sorted(self.spent)}
