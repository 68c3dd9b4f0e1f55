"""The yardstick for `convdiff run`: one process, no isolation, no judging, no reports.

    python bench/bare_loop.py BACKEND [CASES...]

Loads the cases, imports the framework once, then per case: the inputs, the framework
call through its adapter, and the two float64 oracle convolutions (output and scale).
`make bench` times this and `convdiff run --backends BACKEND` over the same cases, each
as a whole process, and prints the ratio.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backends.registry import get_backend
from harness.model.loader import load_cases
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference


def main(argv: list[str]) -> None:
    name, paths = argv[0], argv[1:] or ["cases"]
    cases = load_cases(paths)
    backend = get_backend(name)
    backend.setup("cpu")
    for case in cases:
        inputs = make_inputs(case)
        if case.expect == "valid" and backend.supports(case, "cpu") is None:
            with contextlib.suppress(Exception):  # the floor only times the call
                backend.run(case, inputs, "cpu")
        if case.geometry is not None:
            reference(case, inputs.x, inputs.w, inputs.b)


if __name__ == "__main__":
    main(sys.argv[1:])
