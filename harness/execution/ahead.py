"""What a batched build (Backend.prepare) is handed ahead: a worker's cases and the relation runs derived from them.

A metamorphic relation (harness/numerics/relations.py) runs a case again in other forms: other batch sizes, the
other layout, scaled or subnormal data, the adjoint partner. On a target that bakes the weights into a compiled
model, each of those runs is a model of its own, so without this a case with every relation builds about ten
models one by one after its own was built in a batch. `ahead` gives the worker the runs its own process will
make (`main`), with the very data the controller sends for them (the same inputs, oracle and variants(): every
step is deterministic), so that the adapter's prepare builds them in its batches and run() finds each in its
cache. The runs of other processes (a second worker, another thread count, a kernel variant) are left out:
their keys are the same case again, or carry the variant's own settings. A case whose inputs exceed
MAX_AHEAD_BYTES keeps its derived runs out (their batch-7 data would sit in memory until its batch is built);
they build one by one as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from backends.artifacts import case_key
from harness.model.case import Case
from harness.numerics.inputs import Inputs, make_inputs
from harness.numerics.oracle import reference
from harness.numerics.quant import quant_reference
from harness.numerics.relations import variants

MAX_AHEAD_BYTES = 4 << 20  # a case's x and w; larger cases' derived runs build one by one


def oracle_for(case: Case, inputs: Inputs) -> tuple | None:
    """The float64 reference of a case as the judge and the relations take it (None without geometry)."""
    if case.geometry is None:
        return None
    if case.quantized:
        assert inputs.quant is not None
        return quant_reference(case, inputs.x, inputs.w, inputs.b, inputs.quant)
    return reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)


def ahead(cases: Sequence[Case], relations: Sequence[tuple[str, ...]] | None = None) -> tuple[list[Case], list[Inputs]]:
    """The cases with their inputs, each followed by the main-process runs of its relations (`relations[i]`: the
    names the run judges on cases[i] on this target; none: the cases alone), each distinct model once."""
    out_cases: list[Case] = []
    out_inputs: list[Inputs] = []
    seen: set[str] = set()

    def add(case: Case, inputs: Inputs) -> None:
        key = case_key(case, inputs, {})  # the model's key without an adapter's salt: equal keys, one build
        if key not in seen:
            seen.add(key)
            out_cases.append(case)
            out_inputs.append(inputs)

    for i, case in enumerate(cases):
        inputs = make_inputs(case)
        add(case, inputs)
        names = relations[i] if relations is not None and i < len(relations) else ()
        small = sum(a.nbytes for a in (inputs.x, inputs.w) if isinstance(a, np.ndarray)) <= MAX_AHEAD_BYTES
        if not names or case.geometry is None or not small:
            continue
        for run in variants(case, inputs, oracle_for(case, inputs), tuple(names)).values():
            if run.process == "main":
                add(run.case, run.inputs)
    return out_cases, out_inputs
