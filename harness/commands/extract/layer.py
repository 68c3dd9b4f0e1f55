"""One convolution as a model computes it: the framework-neutral record every probe emits.

Probes (onnx_probe, torch_probe, keras_probe) run in their framework's own subprocess and
print a JSON list of these records; the controller only ever sees this plain data. Fields
follow the case schema (ARCHITECTURE.md), per spatial dimension, plus where the layer is
(`name`) and what the framework itself computed for it (`out_size`), which the writer
checks against the case's own output size.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

Padding = str | tuple[tuple[int, int], ...]  # 'same' | 'valid' | ((before, after), ...) per dim


@dataclass(frozen=True)
class LayerConv:
    name: str
    op: str
    batch: int
    in_channels: int
    out_channels: int
    input_size: tuple[int, ...]
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: Padding
    output_padding: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int
    bias: bool
    layout: str
    dtype: str
    out_size: tuple[int, ...] | None = None  # spatial output size the framework computed

    def config(self) -> tuple:
        """What the convolution is, without where it sits or what it produced: the merge key."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name not in ("name", "out_size"))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> LayerConv:
        def tup(v: Any) -> Any:
            return tuple(tup(x) for x in v) if isinstance(v, list) else v

        return cls(**{k: tup(v) for k, v in d.items()})


def per_dim(value: Any, rank: int) -> tuple[int, ...]:
    """An int or a sequence of ints -> one int per spatial dimension."""
    if isinstance(value, int):
        return (value,) * rank
    value = tuple(int(v) for v in value)
    if len(value) == 1 and rank > 1:
        return value * rank
    return value


def symmetric(pads: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """Per-dim symmetric padding -> (before, after) pairs."""
    return tuple((int(p), int(p)) for p in pads)


def onnx_style(pads: list[int] | tuple[int, ...], rank: int) -> tuple[tuple[int, int], ...]:
    """ONNX/TVM order (all befores, then all afters) -> (before, after) pairs."""
    return tuple((int(pads[i]), int(pads[rank + i])) for i in range(rank))


def transpose_crop(full: int, out: int, upper: bool) -> tuple[tuple[int, int], int]:
    """A transposed length stated as its result `out` (TF output_shape, ONNX output_shape /
    auto_pad): crop (before, after) of the full length and the tail extension, in the case's
    terms. `upper`: an odd crop's extra element comes off the end (TF SAME, ONNX SAME_UPPER)."""
    total = full - out
    if total < 0:
        return (0, 0), -total
    small = total // 2
    return ((small, total - small) if upper else (total - small, small)), 0
