"""Gradient bug classes for `mutant:<bug>`: torch autograd with one historical backward bug put back.

The forward stays plain torch; `run_gradients` computes the true gradients, then each
mutation rewrites the one gradient its bug touches, only where the bug can show, and
writes the change into the translation. Bug classes (DOMAIN.md, "Gradients"):

* `grad_input_zero_fill_output_padding`: grad_input of a strided conv built as a transposed
  conv whose output_padding (the padded input rows after the last window, L % s != 0) is
  realised as a zero fill: the last rows of grad_input are 0 where the kernel reaches them.
* `grad_input_ignore_output_padding`: the same transposed conv built without output_padding,
  the input size rebuilt from the output size alone: grad_input is short by those rows.
* `grad_input_transposed_weight_layout`: a grouped conv's registered gradient hands the OIHW
  weight to a transposed conv as if it were IOHW (the buffer read with its axes swapped).
* `grad_input_unflipped_kernel`: the transposed conv inside the gradient does not flip the
  kernel (correlation where the adjoint needs convolution).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from backends.base import Output
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.oracle_grad import unreached

GRAD_MUTANTS = (
    "grad_input_zero_fill_output_padding", "grad_input_ignore_output_padding",
    "grad_input_transposed_weight_layout", "grad_input_unflipped_kernel",
)
Recompute = Callable[[Inputs], dict[str, Output]]  # plain torch gradients on other inputs


def _spatial_axes(case: Case) -> range:
    return range(1, 1 + case.rank) if case.channels_last else range(2, 2 + case.rank)


def _tail(case: Case, arr: np.ndarray, rows: tuple[int, ...], keep: bool) -> tuple[np.ndarray, list[str]]:
    """Zero (keep=True) or drop the last `rows[i]` entries along each spatial axis of grad_input."""
    arr, lines = arr.copy(), []
    for ax, r in zip(_spatial_axes(case), rows):
        if not r:
            continue
        idx = [slice(None)] * arr.ndim
        idx[ax] = slice(arr.shape[ax] - r, None) if keep else slice(0, arr.shape[ax] - r)
        if keep:
            arr[tuple(idx)] = 0
            lines.append(f"dx[{':, ' * ax}-{r}:] = 0")
        else:
            arr = arr[tuple(idx)]
            lines.append(f"dx = dx[{':, ' * ax}:-{r}]")
    return arr, lines


def _swapped_layout(w: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(w.swapaxes(0, 1)).reshape(w.shape)


def mutate_gradients(bug: str, case: Case, inputs: Inputs, grads: dict[str, Output],
                     recompute: Recompute) -> dict[str, Output]:
    """The gradients with `bug` applied where it can show; the others untouched."""
    dx = grads.get("grad_input")
    if dx is None or case.geometry is None:
        return grads
    lines: list[str] = []
    if bug in ("grad_input_zero_fill_output_padding", "grad_input_ignore_output_padding"):
        rows = unreached(case)
        if not any(rows):
            return grads
        dx.array, lines = _tail(case, dx.array, rows, keep=bug.startswith("grad_input_zero"))
    elif bug == "grad_input_transposed_weight_layout":
        w = inputs.w
        if case.groups == 1 or w.shape[0] == 1 or w.shape[1] == 1:
            return grads
        dx.array = recompute(Inputs(inputs.x, _swapped_layout(w), inputs.b, inputs.dy))["grad_input"].array
        lines = ["# grad_input from w.transpose(0, 1).contiguous().reshape(w.shape): OIHW read as IOHW"]
    elif bug == "grad_input_unflipped_kernel":
        if all(k == 1 for k in case.kernel_size):
            return grads
        flipped = np.ascontiguousarray(np.flip(inputs.w, axis=tuple(range(2, inputs.w.ndim))))
        dx.array = recompute(Inputs(inputs.x, flipped, inputs.b, inputs.dy))["grad_input"].array
        lines = [f"# grad_input from w.flip({list(range(2, inputs.w.ndim))}): the adjoint's kernel flip missing"]
    dx.translation = "\n".join([dx.translation, *(f"{ln}  # mutant:{bug}" for ln in lines)])
    return grads
