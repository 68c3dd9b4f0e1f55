"""Name the bug class behind a gradient mismatch, as diagnosis.py does for the forward output.

Each hypothesis yields alternative (reference, scale) pairs for the judged gradient,
from the float64 gradient oracle on modified inputs or the canonical gradient
transformed. The first alternative (most specific first) that has the backend's shape,
differs from the canonical gradient beyond its bound, and reproduces the backend's
values within the bound names the mismatch. Names are the `mutant:<bug>` names of
backends/testing/grad_mutants.py, whose docstring describes each class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from harness.model.case import Case
from harness.numerics.bound import error_bound
from harness.numerics.inputs import Inputs
from harness.numerics.oracle_grad import gradients, unreached

Array = np.ndarray
Pair = tuple[Array, Array]
Hypothesis = Callable[[Case, Inputs, str, Pair], Iterator[Pair]]


def _spatial_axes(case: Case) -> range:
    return range(1, 1 + case.rank) if case.channels_last else range(2, 2 + case.rank)


def _tail(case: Case, a: Array, rows: tuple[int, ...], zero: bool) -> Array:
    a = a.copy()
    for ax, r in zip(_spatial_axes(case), rows):
        if r:
            idx = [slice(None)] * a.ndim
            idx[ax] = slice(a.shape[ax] - r, None) if zero else slice(0, a.shape[ax] - r)
            a = a if zero else a[tuple(idx)]
            if zero:
                a[tuple(idx)] = 0.0
    return a


def _on_weight(case: Case, inputs: Inputs, output: str, w: Array) -> Pair:
    assert inputs.dy is not None
    ref = gradients(case, inputs.x, w, inputs.dy)[output]
    scale = gradients(case, np.abs(inputs.x), np.abs(w), np.abs(inputs.dy))[output]
    return ref, scale


def grad_input_ignore_output_padding(case: Case, inputs: Inputs, output: str, canon: Pair) -> Iterator[Pair]:
    """grad_input short by the padded rows no window reached (the input size rebuilt from the output)."""
    rows = unreached(case)
    if output == "grad_input" and any(rows):
        yield _tail(case, canon[0], rows, zero=False), _tail(case, canon[1], rows, zero=False)


def grad_input_zero_fill_output_padding(case: Case, inputs: Inputs, output: str, canon: Pair) -> Iterator[Pair]:
    """grad_input's last rows (the adjoint transposed conv's output_padding) zero-filled."""
    rows = unreached(case)
    if output == "grad_input" and any(rows):
        yield _tail(case, canon[0], rows, zero=True), _tail(case, canon[1], rows, zero=True)


def grad_input_transposed_weight_layout(case: Case, inputs: Inputs, output: str, canon: Pair) -> Iterator[Pair]:
    """grad_input of a grouped op with the weight's buffer read with its two leading axes swapped."""
    w = inputs.w
    if output == "grad_input" and case.groups > 1 and w.shape[0] > 1 and w.shape[1] > 1:
        yield _on_weight(case, inputs, output, np.ascontiguousarray(w.swapaxes(0, 1)).reshape(w.shape))


def grad_input_unflipped_kernel(case: Case, inputs: Inputs, output: str, canon: Pair) -> Iterator[Pair]:
    """grad_input computed with the kernel flipped (the adjoint's flip missing, or done twice)."""
    if output == "grad_input" and any(k > 1 for k in case.kernel_size):
        yield _on_weight(case, inputs, output, np.ascontiguousarray(np.flip(inputs.w, tuple(range(2, inputs.w.ndim)))))


HYPOTHESES: list[Hypothesis] = [
    grad_input_ignore_output_padding,
    grad_input_zero_fill_output_padding,
    grad_input_transposed_weight_layout,
    grad_input_unflipped_kernel,
]


def diagnose_gradient(case: Case, inputs: Inputs, output: str, out: np.ndarray, oracle: Pair) -> str | None:
    """The name of the gradient bug class that reproduces `out` (the backend's `output`), or None."""
    out64 = np.asarray(out, dtype=np.float64)
    if case.geometry is None or inputs.dy is None or not np.all(np.isfinite(out64)):
        return None
    ref, scale = oracle
    bound = error_bound(case, ref, scale, output=output)
    if out64.shape == ref.shape and np.all(np.abs(out64 - ref) <= bound):
        return None
    for hypothesis in HYPOTHESES:
        for alt_ref, alt_scale in hypothesis(case, inputs, output, oracle):
            if alt_ref.shape != out64.shape:
                continue
            if alt_ref.shape == ref.shape and np.all(np.abs(alt_ref - ref) <= bound):
                continue  # indistinguishable from the canonical gradient: explains nothing
            if np.all(np.abs(out64 - alt_ref) <= error_bound(case, alt_ref, alt_scale, output=output)):
                return hypothesis.__name__
    return None
