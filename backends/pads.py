"""Explicit padding as adapters pass it: (before, after) pairs, and the flat ONNX/TVM form.

Pure helpers (no framework import), shared by the TVM and ONNX paths.
"""

from __future__ import annotations

from harness.model.case import Case


def explicit_pads(case: Case) -> tuple[list[tuple[int, int]], tuple[int, ...]]:
    """(before, after) pairs and output_padding; invalid cases pass what the user wrote."""
    if case.geometry is not None:
        return list(case.geometry.pads), tuple(case.geometry.extend)
    pads = list(case.padding) if isinstance(case.padding, tuple) else [(0, 0)] * case.rank
    return pads, tuple(case.output_padding)


def flat_pads(pads: list[tuple[int, int]]) -> tuple[int, ...]:
    """ONNX's `pads` and TVM's padding form: all befores, then all afters."""
    return (*(b for b, _ in pads), *(a for _, a in pads))
