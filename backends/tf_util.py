"""Small pure pieces of the TensorFlow paths (forward and gradients alike): what TF's
messages mean, and the filter layout."""

from __future__ import annotations

import re

from harness.model.case import Case

NHWC_ONLY = re.compile(r"only supports (the )?N[DHW]*C\b")  # TF refusing an NC* data_format
NODE_PREFIX = re.compile(r"\{\{function_node [^}]*\}\}\s*")  # TF's op-location prefix, noise in messages


def weight_transpose(case: Case) -> tuple[list[int], str]:
    """Permutation of the canonical weight to TF's filter layout, and the line that says it."""
    perm = [*range(2, 2 + case.rank), 1, 0]
    return perm, f"w = tf.transpose(w_canonical, {perm})  # -> (*k, {'O, I' if case.transpose else 'I/g, O'})"
