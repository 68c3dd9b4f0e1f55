"""Run progress: one `rich` bar per backend on a terminal, periodic plain lines elsewhere.

Each bar shows done/total, the count of each status so far, elapsed time and an ETA.
When the stream is not a terminal (CI logs, pipes) a line is written at every tenth of
the whole run and at least every `every` seconds while results come in, so a cold run
that sits on a slow compile still shows it is alive, and logs stay short.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

ALL = "all"


def eta_s(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the mean rate so far; None before the first result."""
    return None if done == 0 else elapsed / done * (total - done)


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--"
    m, s = divmod(round(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"


def _stats(counts: Counter) -> str:
    return " ".join(f"{s}={n}" for s, n in sorted(counts.items()))


class Progress:
    """`Progress({target: n_results})` (or a plain total); `update(status, target)` per result; `close()`."""

    def __init__(self, totals: Mapping[str, int] | int, stream: TextIO = sys.stderr, every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.totals = dict(totals) if isinstance(totals, Mapping) else {ALL: totals}
        self.done: Counter = Counter()
        self.counts: dict[str, Counter] = {t: Counter() for t in self.totals}
        self.stream, self.every, self.clock = stream, every, clock
        self.start = self.last_line = clock()
        self.next_tenth = 1
        console = Console(file=stream)
        self.bars: RichProgress | None = None
        if console.is_terminal:
            self.bars = RichProgress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TextColumn("eta"),
                                     TimeRemainingColumn(), console=console)
            self.tasks = {t: self.bars.add_task(t, total=max(n, 1), stats="") for t, n in self.totals.items()}
            self.bars.start()

    def update(self, status: str, target: str = ALL) -> None:
        if target not in self.totals:  # a result for a target the caller did not announce
            self.totals[target] = 1
            self.counts[target] = Counter()
            if self.bars is not None:
                self.tasks[target] = self.bars.add_task(target, total=1, stats="")
        self.done[target] += 1
        self.counts[target][status] += 1
        if self.bars is not None:
            self.bars.update(self.tasks[target], advance=1, stats=_stats(self.counts[target]))
            return
        now, total = self.clock(), sum(self.totals.values())
        done = sum(self.done.values())
        if done * 10 >= self.next_tenth * total or now - self.last_line >= self.every or done == total:
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()
            self.next_tenth, self.last_line = done * 10 // max(total, 1) + 1, now

    def line(self, now: float | None = None) -> str:
        """One plain line: per target done/total and statuses, then elapsed and ETA (the slowest target's)."""
        elapsed = (self.clock() if now is None else now) - self.start
        parts, etas = [], []
        for t, n in self.totals.items():
            left = eta_s(self.done[t], n, elapsed)
            etas.append(left if self.done[t] < n else 0.0)
            stats = _stats(self.counts[t])
            parts.append(f"{t} {self.done[t]}/{n}" + (f" ({stats})" if stats else ""))
        eta = None if any(e is None for e in etas) else max(etas, default=0.0)
        return f"[{_clock(elapsed)} elapsed, eta {_clock(eta)}] " + "; ".join(parts)

    def close(self) -> None:
        if self.bars is not None:
            self.bars.stop()
