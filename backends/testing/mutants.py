"""`mutant:<bug>`: PyTorch with one historical bug (DOMAIN.md) put back in on purpose.

Test doubles, not backends: they exist so that `convdiff selftest` can prove the
harness catches and names every bug class. Each mutant is the real TorchBackend
plus one small change, made only where its bug can show; on every other case it
is plain torch and passes. The mutation is written into the translation, so a
reproducer script shows the buggy call as a user would write it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from backends.base import Capabilities, Output, Rejected
from backends.testing.grad_mutants import GRAD_MUTANTS, mutate_gradients
from backends.testing.quant_mutants import QUANT_MUTANTS, run_quant_mutant
from backends.torch.eager import TorchBackend
from harness.model.case import Case, Geometry, resolve_geometry
from harness.numerics.epilogue import channel_shape, leading_fold, wrong_axis
from harness.numerics.inputs import Inputs

MUTANTS = (
    "ignore_output_padding", "zero_fill_output_padding", "conv1d_via_conv2d_bad_axis",
    "swap_transpose_weight_axes", "ignore_groups_in_transpose", "same_padding_extra_before",
    "padding_scaled_by_dilation", "flip_kernel", "low_precision_accumulation", *GRAD_MUTANTS,
    "epilogue_dropped", "epilogue_before_bias", "epilogue_fold_wrong_axis", *QUANT_MUTANTS,
)


def _spatial_axes(case: Case) -> range:
    return range(1, 1 + case.rank) if case.channels_last else range(2, 2 + case.rank)


def scaled_pads(case: Case) -> tuple[tuple[int, int], ...]:
    """padding_scaled_by_dilation's pads: the pad before times the dilation on each axis."""
    assert case.geometry is not None
    return tuple((pb * d, pa) for (pb, pa), d in zip(case.geometry.pads, case.dilation))


class MutantBackend(TorchBackend):
    """TorchBackend with the named bug; dispatches to one `_<bug>` method per mutant."""

    test_only = True
    devices = ("cpu",)
    capabilities = Capabilities(devices=("cpu",), gradients="torch.autograd.grad")
    backward = False  # forward bugs stay in the forward: the backward pass is plain torch

    def __new__(cls, bug: str) -> Any:
        """`mutant:<bug>` names the relation mutants too (backends/testing/relation_mutants.py): another class."""
        from backends.testing.relation_mutants import RELATION_MUTANTS, RelationMutant

        return RelationMutant(bug) if bug in RELATION_MUTANTS else super().__new__(cls)

    def __init__(self, bug: str) -> None:
        if bug not in MUTANTS:
            raise ValueError(f"unknown mutant '{bug}' (known: {', '.join(MUTANTS)})")
        self.bug = bug
        self.name = f"mutant:{bug}"
        # the quantized mutants take quantized cases (torch's own path has none)
        self.quantized = "an exact integer simulation with the bug" if bug in QUANT_MUTANTS else ""

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        self.device = device
        if case.quantized and case.geometry is not None:
            return run_quant_mutant(self.bug, case, inputs)
        if self.bug in GRAD_MUTANTS or self.bug in QUANT_MUTANTS or case.geometry is None:
            return super().run(case, inputs, device)  # a float case: the bug cannot show, plain torch
        mutated = getattr(self, f"_{self.bug}")(case, inputs)
        return mutated if mutated is not None else super().run(case, inputs, device)

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        self.backward = True
        try:
            grads = super().run_gradients(case, inputs, dy, device)
            if self.bug in GRAD_MUTANTS:
                grads = mutate_gradients(self.bug, case, inputs, grads,
                                         lambda alt: super(MutantBackend, self).run_gradients(case, alt, dy, device))
        finally:
            self.backward = False
        return grads

    def _torch(self, case: Case, inputs: Inputs, *mutation: str) -> Output:
        """Plain torch on a (mutated) case and inputs, with the mutation recorded first."""
        out = super().run(case, inputs, self.device)
        out.translation = "\n".join([*(f"{m}  # mutant:{self.bug}" for m in mutation), out.translation])
        return out

    def translate(self, case: Case) -> tuple[dict[str, Any], Any, Any, list[str]]:
        kw, pre_pad, crop, notes = super().translate(case)
        if self.bug == "ignore_output_padding" and case.transpose and case.geometry is not None and not self.backward:
            # the importer never passed output_padding (SAME's own tail extension stays)
            kw["output_padding"] = tuple(e - p for e, p in zip(case.geometry.extend, case.output_padding))
        return kw, pre_pad, crop, notes

    # --- one method per bug: None = the bug cannot show here, run plain torch ------
    def _ignore_output_padding(self, case: Case, inputs: Inputs) -> Output | None:
        return None  # done in translate(): the call simply lacks output_padding

    def _zero_fill_output_padding(self, case: Case, inputs: Inputs) -> Output | None:
        if not case.transpose or not any(case.output_padding):
            return None
        out = self._torch(case, inputs)
        arr = out.array.copy()
        for ax, p in zip(_spatial_axes(case), case.output_padding):
            if p:
                idx = [slice(None)] * arr.ndim
                idx[ax] = slice(arr.shape[ax] - p, None)
                arr[tuple(idx)] = 0
        out.array = arr
        for ax, p in zip(_spatial_axes(case), case.output_padding):
            if p:
                out.translation += f"\ny[{':, ' * ax}-{p}:] = 0  # mutant:{self.bug}: output_padding filled with zeros"
        return out

    def _conv1d_via_conv2d_bad_axis(self, case: Case, inputs: Inputs) -> Output | None:
        """Lower to 2-D with the dummy axis last, but give stride/padding/dilation as if it were first."""
        if case.rank != 1:
            return None
        geo = case.geometry
        assert geo is not None
        padding = case.padding if isinstance(case.padding, str) else ((0, 0), case.padding[0])
        size, kernel = (case.input_size[0], 1), (case.kernel_size[0], 1)
        stride, dilation = (1, case.stride[0]), (1, case.dilation[0])
        out_pad = (0, case.output_padding[0])
        two_d = dataclasses.replace(
            case, op=case.op.replace("1d", "2d"), input_size=size, kernel_size=kernel, stride=stride,
            padding=padding, dilation=dilation, output_padding=out_pad,
            geometry=resolve_geometry(case.transpose, size, kernel, stride, padding, out_pad, dilation))
        if min(two_d.geometry.out_size) < 1:
            return None  # torch would refuse the lowered call; not this bug's signature
        x = inputs.x[..., None, :] if case.channels_last else inputs.x[..., None]
        unsqueeze = "x[..., None, :]" if case.channels_last else "x[..., None]"
        out = self._torch(two_d, Inputs(x, inputs.w[..., None], inputs.b),
                          f"x, w = {unsqueeze}, w[..., None]  # dummy axis last, params for dummy-first")
        a = out.array
        if case.channels_last:
            out.array, squeeze = a.reshape(a.shape[0], -1, a.shape[-1]), "y.reshape(y.shape[0], -1, y.shape[-1])"
        else:
            out.array, squeeze = a.reshape(*a.shape[:2], -1), "y.reshape(y.shape[0], y.shape[1], -1)"
        out.translation += f"\ny = {squeeze}  # mutant:{self.bug}: squeeze the dummy axis"
        return out

    def _swap_transpose_weight_axes(self, case: Case, inputs: Inputs) -> Output | None:
        """IOHW handed over as OIHW: the buffer of w.swapaxes(0, 1) read with w's own shape."""
        if not case.transpose:
            return None
        w = np.ascontiguousarray(inputs.w.swapaxes(0, 1)).reshape(inputs.w.shape)
        return self._torch(case, dataclasses.replace(inputs, w=w), "w = w.transpose(0, 1).contiguous().reshape(w.shape)")

    def _ignore_groups_in_transpose(self, case: Case, inputs: Inputs) -> Output | None:
        """Grouped transpose emulated without groups: C_out/groups channels, the whole input in each."""
        if not case.transpose or case.groups == 1:
            return None
        oc = case.out_channels // case.groups
        flat = dataclasses.replace(case, groups=1, out_channels=oc)
        b = None if inputs.b is None else inputs.b[:oc]
        return self._torch(flat, Inputs(inputs.x, inputs.w, b), f"# groups={case.groups} dropped: groups=1 below",
                           *([f"b = b[:{oc}]"] if b is not None else []))

    def _same_padding_extra_before(self, case: Case, inputs: Inputs) -> Output | None:
        geo = case.geometry
        assert geo is not None
        if case.padding != "same" or all(b == a for b, a in geo.pads):
            return None
        pads = tuple((a, b) for b, a in geo.pads)
        moved = dataclasses.replace(case, padding=pads, geometry=Geometry(pads, geo.extend, geo.out_size))
        return self._torch(moved, inputs, f"# SAME pads {list(geo.pads)} placed as {list(pads)} (odd element before)")

    def _padding_scaled_by_dilation(self, case: Case, inputs: Inputs) -> Output | None:
        """A dilated axis padded (or, transposed, cropped) before by pad*dilation instead of pad: the
        padding taken as counted in dilated taps (DOMAIN.md class 10)."""
        geo = case.geometry
        assert geo is not None
        pads = scaled_pads(case)
        if pads == geo.pads:
            return None
        out_pad = geo.extend if case.transpose else case.output_padding
        moved = dataclasses.replace(case, padding=pads, output_padding=out_pad, geometry=resolve_geometry(
            case.transpose, case.input_size, case.kernel_size, case.stride, pads, out_pad, case.dilation))
        if min(moved.geometry.out_size) < 1:
            raise Rejected(f"padding {list(pads)} leaves no output")  # what the framework says on such a call
        return self._torch(moved, inputs, f"# pads {list(geo.pads)} applied as {list(pads)} (pad before * dilation)")

    def _flip_kernel(self, case: Case, inputs: Inputs) -> Output | None:
        if all(k == 1 for k in case.kernel_size):
            return None
        w = np.ascontiguousarray(np.flip(inputs.w, axis=tuple(range(2, inputs.w.ndim))))
        return self._torch(case, dataclasses.replace(inputs, w=w), f"w = w.flip({list(range(2, inputs.w.ndim))})")

    def _low_precision_accumulation(self, case: Case, inputs: Inputs) -> Output | None:
        """float32 computed in float16 and cast back, as a half-precision kernel would."""
        if case.dtype != "float32":
            return None
        half = dataclasses.replace(case, dtype="float16")
        b = None if inputs.b is None else inputs.b.astype(np.float16)
        out = self._torch(half, dataclasses.replace(inputs, x=inputs.x.astype(np.float16), w=inputs.w.astype(np.float16), b=b),
                          "x, w = x.half(), w.half()" + ("; b = b.half()" if b is not None else ""))
        out.array, out.dtype = out.array.astype(np.float32), "float32"
        out.translation += "\ny = y.float()"
        return out

    # --- epilogue bugs: what a graph optimizer's fusion or folding gets wrong -------------
    def _epilogue_dropped(self, case: Case, inputs: Inputs) -> Output | None:
        if not case.epilogue:
            return None
        return self._torch(dataclasses.replace(case, epilogue=()), dataclasses.replace(inputs, epilogue=()),
                           f"# epilogue {list(case.epilogue)} removed by the pass")

    def _epilogue_before_bias(self, case: Case, inputs: Inputs) -> Output | None:
        if not case.epilogue or inputs.b is None:
            return None
        out = self._torch(dataclasses.replace(case, bias=False), dataclasses.replace(inputs, b=None),
                          "# the bias add moved to the end of the fused kernel")
        b = inputs.b.astype(np.float32).reshape(channel_shape(case, out.array.ndim))
        out.array = (out.array.astype(np.float32) + b).astype(out.array.dtype)
        out.translation += f"\ny = y + b.view{channel_shape(case, out.array.ndim)}  # mutant:{self.bug}"
        return out

    def _epilogue_fold_wrong_axis(self, case: Case, inputs: Inputs) -> Output | None:
        """The leading constant ops folded into w along its input-channel axis (bias folded right)."""
        fold, axis = leading_fold(case, inputs.epilogue), wrong_axis(case)
        if fold is None or axis is None:
            return None
        n, a, t = fold
        shape = [1] * inputs.w.ndim
        shape[axis] = -1
        w = (inputs.w.astype(np.float64) * a.reshape(shape)).astype(inputs.w.dtype)
        b0 = np.zeros(case.out_channels) if inputs.b is None else inputs.b.astype(np.float64)
        b = (a * b0 + t).astype(inputs.w.dtype)
        folded = dataclasses.replace(case, bias=True, epilogue=case.epilogue[n:])
        return self._torch(folded, Inputs(inputs.x, w, b, epilogue=inputs.epilogue[n:]),
                           f"w = w * a.view({shape})  # {list(case.epilogue[:n])} folded along weight axis {axis}",
                           "b = a * b + t")
