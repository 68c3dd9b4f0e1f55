"""Reproducer templates for backends from outside convdiff (backends/registry.py: entry points, module:Class).

A plugin may ship its own template: a function `fn(rec, case) -> str` registered under the entry point group
`convdiff.repro` with the backend's exact name, returning the code that defines `run_framework(x, w, b)` as
convdiff's own templates do (reports/repro/registry.py). Without one, the script runs the one case through
the plugin's adapter itself: it imports convdiff (the case and its inputs from the seed) and the adapter's
module, then judges the output with the same float64 reference and bound as every other reproducer. That
script needs convdiff and the plugin installed (or the working directory holding the adapter's module).
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from backends.registry import REPRO_GROUP, load_class, registered
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.registry import BackendTemplate, ReproUnavailable


def plugin_template(name: str) -> BackendTemplate | None:
    """The template a distribution registers for this exact backend name under `convdiff.repro`, if any."""
    for ep in importlib.metadata.entry_points(group=REPRO_GROUP):
        if ep.name == name:
            fn: Any = ep.load()
            return fn
    return None


def adapter_template(name: str) -> BackendTemplate | None:
    """The generic template for a registered backend that is not convdiff's own; None for convdiff's."""
    reg = registered().get(name)
    if reg is None or reg.source == "convdiff":
        return None
    load_class(reg.spec)  # importable here, or the script could not import it either

    def template(rec: Record, case: Case) -> str:
        if rec.output != "out":
            raise ReproUnavailable(f"{name} is a plugin backend: convdiff's generic script reproduces its forward "
                                   "results only (a template of the plugin's own, entry point convdiff.repro, can do more)")
        params = {k: v for k, v in rec.params.items() if k != "tags"}
        return _SOURCE.format(spec=reg.spec, name=name, params=repr(params), file=repr(rec.file))

    return template


_SOURCE = '''
# {name} is a plugin backend ({spec}): the case runs through its own adapter, as convdiff ran it.
# Needs convdiff and the plugin importable (installed, or the adapter's module in the working directory).
import os

sys.path.insert(0, os.getcwd())
from backends.registry import load_class  # noqa: E402
from harness.model.build import make_case  # noqa: E402
from harness.numerics.inputs import make_inputs  # noqa: E402

CASE = make_case(file={file}, id="repro", **{params})
ADAPTER = load_class({spec!r})()
ADAPTER.name = {name!r}
ADAPTER.setup(DEVICE)


def run_framework(x, w, b):
    inputs = make_inputs(CASE)  # the arrays convdiff drew from SEED: the same as x, w, b above
    out = ADAPTER.run(CASE, inputs, DEVICE)
    print("call:", out.translation.replace(chr(10), "; "))
    return np.asarray(out.array, dtype=np.float64), out.dtype
'''
