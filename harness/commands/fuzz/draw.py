"""`Draw`: the seeded draws of one generated config (harness/commands/fuzz/gen.py, boundary.py, invalid.py,
steer.py); the schema's value sets they draw from; and `per_dim_lists`, the per-axis form of a config those
modules change one axis at a time."""

from __future__ import annotations

import random
from typing import Any, get_args

from harness.model.case import QUANT_DTYPES, op_rank
from harness.model.schema import CaseModel, QuantModel

PER_AXIS = ("input_size", "kernel_size", "stride", "dilation", "output_padding")


def _choices(name: str) -> tuple:
    """The values a Literal field of the schema allows."""
    return get_args(CaseModel.model_fields[name].annotation)


def minimum(name: str) -> int:
    """The `ge` bound the schema puts on an integer field (1 where it puts none: a valid convolution's)."""
    return next((m.ge for m in CaseModel.model_fields[name].metadata if hasattr(m, "ge")), 1)


OPS, LAYOUTS, DATA_KINDS = _choices("op"), _choices("layout"), _choices("data")
DTYPES = tuple(d for d in _choices("dtype") if d not in QUANT_DTYPES)  # float dtypes (gen.py: QUANT_SHARE quantized)
QUANT_RANGES = get_args(QuantModel.model_fields["range"].annotation)


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


def per_dim_lists(fields: dict[str, Any]) -> dict[str, Any]:
    """The config with every per-axis field as a list (one value per spatial axis) and explicit padding as
    [before, after] pairs (same/valid stay)."""
    rank = op_rank(fields["op"])
    f = dict(fields)
    for name in PER_AXIS:
        v = f.get(name, 0 if name == "output_padding" else 1)
        f[name] = list(v) if isinstance(v, list) else [v] * rank
    pad = f.get("padding", 0)
    if not isinstance(pad, str):
        pads = pad if isinstance(pad, list) else [pad] * rank
        f["padding"] = [list(p) if isinstance(p, list) else [p, p] for p in pads]
    return f
