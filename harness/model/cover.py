"""The smoke cover: the fewest smoke cases that between them show every value of every case feature.

`make test` runs the whole smoke tier on every backend that runs a case as it is given (eager
calls: milliseconds a case). A backend that exports, converts or compiles a model per case
(`Backend.builds_per_case`) pays seconds a case cold, and on a 2-core machine its 73 smoke cases
alone took most of the 8 minutes `make test` has (issue 26). There `make test` runs the shape cover (below)
instead (harness/commands/smoke_select.py adds, per known issue naming smoke cases there, the first), and
the rest of the smoke tier runs on those paths in the nightly (`convdiff run`, every case on every
backend) and with `--compiled-smoke all`.

A feature is one value of one axis a case varies along: the op (rank and transpose), dtype,
layout, data, expect, the padding kind (a name, zero, symmetric or asymmetric pairs), stride and
dilation (1 or larger), groups (one, grouped, depthwise), bias, output_padding, a batch above
one, each epilogue op and whether there is one, the quantization scheme, each tag, each judged
gradient and the case file (each file states a concern of its own: a bug class, a framework's
padding convention, drift). The cover is greedy: the case adding most features not yet shown,
ties to the earlier case in corpus order, so every machine picks the same cases.

The shape cover (`shape_features`) keeps only what reaches an adapter's translation: the axes above without
the case file and the tags, plus the forms of the call a tag or a file stood for (unbatched, whose `same`,
tensors of another dtype than the case's, a weight shape given). Tags and files name concerns about a
framework's behaviour (a bug class's seed, a padding convention), which cannot change between two runs
on the same pinned releases, while a change to convdiff can break any translation: `make test` draws the
compiled paths' share from this cover (harness/commands/smoke_select.py), and the nightly runs the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from harness.model.case import Case


def _padding_kind(case: Case) -> str:
    if isinstance(case.padding, str):
        return case.padding
    if all(a == 0 and b == 0 for a, b in case.padding):
        return "zero"
    return "symmetric" if all(a == b for a, b in case.padding) else "asymmetric"


def _groups_kind(case: Case) -> str:
    if case.groups <= 1:
        return "one"
    return "depthwise" if case.groups == case.in_channels else "grouped"


def features(case: Case) -> frozenset[str]:
    """Every feature value the case shows (the module doc lists the axes)."""
    found = {
        f"op={case.op}", f"dtype={case.dtype}", f"layout={case.layout}", f"data={case.data}",
        f"expect={case.expect}", f"padding={_padding_kind(case)}", f"groups={_groups_kind(case)}",
        f"stride>1={any(s > 1 for s in case.stride)}", f"dilation>1={any(d > 1 for d in case.dilation)}",
        f"bias={case.bias}", f"batch>1={case.batch > 1}", f"epilogue={bool(case.epilogue)}",
        f"file={Path(case.file).name}",
    }
    if case.transpose:
        found.add(f"output_padding={any(case.output_padding)}")
    found.update(f"epilogue_op={op}" for op in case.epilogue)
    if case.quant is not None:
        found.update({f"quant.per_channel={case.quant.per_channel}", f"quant.range={case.quant.range}"})
    found.update(f"tag={t}" for t in case.tags)
    found.update(f"gradient={g}" for g in case.gradient_outputs)
    return frozenset(found)


def shape_features(case: Case) -> frozenset[str]:
    """The features that reach a translation (the module doc): `features` without the file and the tags,
    with the forms of the call."""
    found = {f for f in features(case) if not f.startswith(("file=", "tag="))}
    found.add(f"unbatched={case.unbatched}")
    found.add(f"mixed_dtypes={bool(case.input_dtype or case.weight_dtype or case.bias_dtype)}")
    found.add(f"weight_shape_given={case.weight_shape_given is not None}")
    if case.padding == "same":
        found.add(f"same_convention={case.same_convention}")
    return frozenset(found)


def cover(cases: Sequence[Case], by: Callable[[Case], frozenset[str]] = features) -> list[Case]:
    """The greedy cover of `cases`' features (`by`), in the order chosen; deterministic for a given order."""
    shown = [by(c) for c in cases]
    left: set[str] = set().union(*shown) if shown else set()
    chosen: list[Case] = []
    while left:
        best = max(range(len(cases)), key=lambda k: (len(shown[k] & left), -k))
        chosen.append(cases[best])
        left -= shown[best]
    return chosen


def uncovered(cases: Iterable[Case], chosen: Iterable[Case],
              by: Callable[[Case], frozenset[str]] = features) -> set[str]:
    """The features (`by`) of `cases` that no case of `chosen` shows (empty for a cover)."""
    return set().union(*map(by, cases)) - set().union(*map(by, chosen))
