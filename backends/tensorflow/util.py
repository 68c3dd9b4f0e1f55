"""Small pure pieces of the TensorFlow paths (forward and gradients alike): what TF's
messages mean, and the filter layout."""

from __future__ import annotations

import re

import numpy as np

from harness.model.case import Case

# what `import tensorflow` also imports when installed, that no TensorFlow path here uses (Backend.excludes)
TF_EXCLUDES = ("jax", "matplotlib")

NHWC_ONLY = re.compile(r"only supports (the )?N[DHW]*C\b")  # TF refusing an NC* data_format
NODE_PREFIX = re.compile(r"\{\{function_node [^}]*\}\}\s*")  # TF's op-location prefix, noise in messages
TRAILER = re.compile(r"\s*(\[\[\{\{node [^]]*\]\]\s*)?(\[Op:[^]]*\])?\s*$")  # graph node and op suffixes


def weight_transpose(case: Case) -> tuple[list[int], str]:
    """Permutation of the canonical weight to TF's filter layout, and the line that says it."""
    perm = [*range(2, 2 + case.rank), 1, 0]
    return perm, f"w = tf.transpose(w_canonical, {perm})  # -> (*k, {'O, I' if case.transpose else 'I/g, O'})"


def tf_filter(case: Case, w: np.ndarray) -> tuple[np.ndarray, str]:
    """The canonical weight in TF's filter layout, and the line that says it. An invalid case's weight of
    another rank has no such permutation: it goes to TensorFlow as given, for TF to refuse."""
    perm, line = weight_transpose(case)
    if w.ndim != len(perm):
        return w, f"w = w_canonical  # a {w.ndim}-D weight, as given"
    return np.ascontiguousarray(np.transpose(w, perm)), line


def framework_message(exc: BaseException) -> str:
    """`Type: message` of a TF exception, eager or graph: a graph execution error's own first line
    ("Graph execution error:") is replaced by the kernel's message after the trace of the node."""
    text = str(exc).strip()
    if text.startswith("Graph execution error"):
        text = text.split("\n\n")[-1]
    line = text.splitlines()[0] if text else ""
    line = NODE_PREFIX.sub("", TRAILER.sub("", line)).strip()
    return f"{type(exc).__name__}: {line}".strip()


def layout_perms(rank: int) -> tuple[list[int], list[int]]:
    """NC* -> N*C and back: the transposes around an op TF runs in N*C only."""
    return [0, *range(2, 2 + rank), 1], [0, rank + 1, *range(1, rank + 1)]
