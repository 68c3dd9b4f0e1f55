"""`Draw`: the seeded draws of one generated config (harness/commands/fuzz/gen.py, invalid.py, steer.py)."""

from __future__ import annotations

import random
from typing import Any


class Draw:
    """Seeded draws for one config attempt."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.rnd = random.Random(key)

    def integers(self, lo: int, hi: int) -> int:
        """Uniform on [lo, hi], both ends included."""
        return self.rnd.randint(lo, hi)

    def sampled_from(self, values: Any) -> Any:
        return self.rnd.choice(list(values))

    def booleans(self) -> bool:
        return self.rnd.random() < 0.5

    def axis(self, rank: int) -> int:
        """The spatial axis a focus shapes: the last one half the time (the one kernels vectorize along, and the
        one the `[-1]` features of harness/model/features.py look at), else any."""
        return rank - 1 if self.booleans() else self.integers(0, rank - 1)

    def weighted(self, *pairs: tuple[Any, int]) -> Any:
        """A value of (value, weight) pairs, in proportion to its weight."""
        return self.rnd.choices([v for v, _ in pairs], weights=[n for _, n in pairs])[0]
