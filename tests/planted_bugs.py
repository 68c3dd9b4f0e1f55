"""Plugin adapters with a bug planted where a known rule says: the truth `convdiff scope` must find.

Each is PyTorch's eager adapter (as a user's adapter may build on it), run by `--backends
name=tests.planted_bugs:Class`, with one defect that shows exactly when `truth(case)` holds and is gross
enough to be caught on every float case it touches. The four differ in shape:

- PaddingScaledByDilation: a conjunction on one axis (dilation > 1 and pad before > 0): the pad before
  is multiplied by the dilation (DOMAIN.md class 10, the bug a new user planted).
- GroupRatioChannels: a relation between channel counts (grouped, per-group input and output counts
  differ): only the first group's output channels are returned (a wrong shape).
- LongSumUninitialized: a threshold (K = C_in/groups * prod(kernel) above 64): the last output element
  is left uninitialized (NaN), as a blocked kernel for long sums that never writes its tail.
- StridedSingleOutput: an output-length condition (an axis with one output and stride > 1): the output
  is left uninitialized (NaN).

Each defect is one no bound can hide (a shape, a NaN, a shifted window that changes the shape), so
that "fails" is exactly `truth`, whatever the dtype, data or epilogue.

`TRUTH` maps each class to its rule in the selector language, for the measurement in
bench/scope_planted.py; `truth` methods state the same rule in plain Python on the Case.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from backends.base import Output, Rejected, require_api
from backends.torch.eager import TorchBackend
from harness.model.case import Case, resolve_geometry
from harness.numerics.inputs import Inputs

require_api(1, 1)


class Planted(TorchBackend):
    """Plain torch wherever `truth` is false."""

    devices = ("cpu",)

    def truth(self, case: Case) -> bool:
        raise NotImplementedError

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if case.geometry is None or case.quantized or not self.truth(case):
            return super().run(case, inputs, device)
        return self.planted(case, inputs, device)

    def planted(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise NotImplementedError


class PaddingScaledByDilation(Planted):
    def truth(self, case: Case) -> bool:
        return any(d > 1 and pb > 0 for d, (pb, _) in zip(case.dilation, case.geometry.pads))

    def planted(self, case: Case, inputs: Inputs, device: str) -> Output:
        pads = tuple((pb * d, pa) for (pb, pa), d in zip(case.geometry.pads, case.dilation))
        extend = case.geometry.extend if case.transpose else case.output_padding
        geo = resolve_geometry(case.transpose, case.input_size, case.kernel_size, case.stride, pads, extend,
                               case.dilation)
        if min(geo.out_size) < 1:
            raise Rejected(f"padding {list(pads)} leaves no output")
        moved = dataclasses.replace(case, padding=pads, output_padding=extend, geometry=geo)
        return TorchBackend.run(self, moved, inputs, device)


class GroupRatioChannels(Planted):
    def truth(self, case: Case) -> bool:
        return case.groups > 1 and case.in_channels // case.groups != case.out_channels // case.groups

    def planted(self, case: Case, inputs: Inputs, device: str) -> Output:
        out = TorchBackend.run(self, case, inputs, device)
        keep = case.out_channels // case.groups
        out.array = out.array[..., :keep] if case.channels_last else out.array[:, :keep]
        return out


class LongSumUninitialized(Planted):
    def truth(self, case: Case) -> bool:
        return (case.in_channels // case.groups) * math.prod(case.kernel_size) > 64

    def planted(self, case: Case, inputs: Inputs, device: str) -> Output:
        out = TorchBackend.run(self, case, inputs, device)
        out.array = out.array.copy()
        out.array.reshape(-1)[-1] = np.nan
        return out


class StridedSingleOutput(Planted):
    def truth(self, case: Case) -> bool:
        return any(o == 1 and s > 1 for o, s in zip(case.geometry.out_size, case.stride))

    def planted(self, case: Case, inputs: Inputs, device: str) -> Output:
        out = TorchBackend.run(self, case, inputs, device)
        out.array = np.full_like(out.array, np.nan)
        return out


TRUTH = {
    "PaddingScaledByDilation": "any(d > 1 and pb > 0 for d, pb in zip(dilation, pad_before))",
    "GroupRatioChannels": "groups > 1 and in_per_group != out_per_group",
    "LongSumUninitialized": "acc_len > 64",
    "StridedSingleOutput": "any(o == 1 and s > 1 for o, s in zip(out_size, stride))",
}
