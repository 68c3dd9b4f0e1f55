"""Explicit padding as adapters pass it: (before, after) pairs, and the flat ONNX/TVM form.

Pure helpers (no framework import), shared by the TVM and ONNX paths and by any adapter that states an invalid
case's padding.
"""

from __future__ import annotations

from harness.model.case import Case, resolve_geometry


def stated_pads(case: Case) -> list[tuple[int, int]]:
    """An invalid case's padding as (before, after) pairs, as the case states it (negative amounts included):
    `same` resolved where its stride and dilation let it be (both >= 1), otherwise, and for `valid`, zeros."""
    if isinstance(case.padding, tuple):
        return list(case.padding)
    if case.padding == "same" and min(case.stride) >= 1 and min(case.dilation) >= 1:
        return list(resolve_geometry(case.transpose, case.input_size, case.kernel_size, case.stride, "same",
                                     (), case.dilation).pads)
    return [(0, 0)] * case.rank


def explicit_pads(case: Case) -> tuple[list[tuple[int, int]], tuple[int, ...]]:
    """(before, after) pairs and output_padding; invalid cases pass what the user wrote."""
    if case.geometry is not None:
        return list(case.geometry.pads), tuple(case.geometry.extend)
    return stated_pads(case), tuple(case.output_padding)


def flat_pads(pads: list[tuple[int, int]]) -> tuple[int, ...]:
    """ONNX's `pads` and TVM's padding form: all befores, then all afters."""
    return (*(b for b, _ in pads), *(a for _, a in pads))
