"""The controller's own work per case, done ahead on a thread: inputs and float64 oracles.

`convdiff run` starts this before its workers have imported their frameworks, so the
first cases are ready when the workers are; afterwards it keeps the oracle (the
controller's heaviest step) off the path between a worker's answer and the next case.
The thread stays ahead by at most a memory budget, so model-sized cases cannot pile up.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

BUDGET_BYTES = 256 * 2**20  # prepared but not yet taken, in array bytes...
MAX_AHEAD = 64              # ...and in cases: a source drawn on demand (fuzz) must not run far ahead
_DONE = object()


class Prefetch:
    """Iterate `prepare(case)` over `cases`, computed on a background thread started at once."""

    def __init__(self, cases: Iterable[Any], prepare: Callable[[Any], tuple], budget: int = BUDGET_BYTES,
                 max_ahead: int = MAX_AHEAD) -> None:
        self.cases, self.prepare, self.budget, self.max_ahead = cases, prepare, budget, max_ahead
        self.items: deque[tuple[Any, int]] = deque()
        self.held = 0
        self.cond = threading.Condition()
        self.cancelled = False
        self.thread = threading.Thread(target=self._produce, daemon=True, name="prefetch")
        self.thread.start()

    def _produce(self) -> None:
        try:
            for case in self.cases:
                item = self.prepare(case)
                size = nbytes(item)
                with self.cond:
                    self.cond.wait_for(lambda size=size: self._room(size))
                    if self.cancelled:
                        return
                    self.items.append((item, size))
                    self.held += size
                    self.cond.notify_all()
            self._put(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            self._put(exc)

    def _room(self, size: int) -> bool:
        """Cancelled, or within both budgets; one item always gets through, however large."""
        return self.cancelled or not self.items or (
            self.held + size <= self.budget and len(self.items) < self.max_ahead)

    def _put(self, item: Any) -> None:
        with self.cond:
            self.items.append((item, 0))
            self.cond.notify_all()

    def __iter__(self) -> Iterator[tuple]:
        try:
            while True:
                with self.cond:
                    self.cond.wait_for(lambda: bool(self.items))
                    item, size = self.items.popleft()
                    self.held -= size
                    self.cond.notify_all()
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop producing (the consumer stopped early, e.g. Ctrl-C or a fuzz time limit)."""
        with self.cond:
            self.cancelled = True
            self.cond.notify_all()


def nbytes(value: Any) -> int:
    """Bytes held by the arrays in a prepared item (nested tuples, lists, dicts, dataclasses)."""
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if isinstance(value, tuple | list):
        return sum(nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if hasattr(value, "__dataclass_fields__"):
        return sum(nbytes(getattr(value, f)) for f in value.__dataclass_fields__)
    return 0
