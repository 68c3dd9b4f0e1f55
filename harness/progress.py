"""A one-line progress bar on a terminal; a line per 10% elsewhere (CI logs stay short)."""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO = sys.stderr) -> None:
        self.total, self.stream, self.done = max(total, 1), stream, 0
        self.tty = stream.isatty()
        self.counts: Counter = Counter()
        self.start = self.last = time.monotonic()
        self.next_decile = 1

    def update(self, status: str) -> None:
        self.done += 1
        self.counts[status] += 1
        now = time.monotonic()
        frac = self.done / self.total
        if self.tty and (now - self.last > 0.1 or self.done == self.total):
            bar = "#" * int(30 * frac)
            stats = " ".join(f"{s}={n}" for s, n in sorted(self.counts.items()))
            self.stream.write(f"\r[{bar:<30}] {self.done}/{self.total} {now - self.start:6.1f}s {stats}\x1b[K")
            self.stream.flush()
            self.last = now
        elif not self.tty and frac * 10 >= self.next_decile:
            self.stream.write(f"{self.done}/{self.total} results ({now - self.start:.1f}s)\n")
            self.next_decile = int(frac * 10) + 1

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
