"""The measured capability table cannot be fooled.

1. For every cell an adapter declares `unsupported` (within the ops its variant covers), the
   framework's most direct way to express it (tests/direct_attempts.py, written apart from the
   adapters) runs in a subprocess: the test fails if the framework accepts it and gives the
   oracle's answer.
2. What `convdiff backends --capabilities` declares and what `--probe` measures agree, cell by cell,
   wherever the declaration's text decides the cell (harness/commands/probe/declared.py).
The probe runs through the real workers (cached per framework version under .convdiff-cache/probe).
Under `make test` it measures the 2-D cells (48 of 144: the rank whose cells every path expresses):
all of them on the eager backends; on the paths that export, convert or compile a model per case
(`builds_per_case`), the cells their declaration says no to, since there a measured cell costs a cold
compile, a declared-yes cell can only fail the "says yes, measured unsupported" check, and an undecided
one is checked only where it is measured unsupported (102 of 864 cells were kept with the undecided ones:
the probe fixture 148 s -> 27 s of a cold make test item on a 2-core AVX2 EPYC; without them 48 more cells
of ExecuTorch's, whose declaration decides none, were lowered for nothing to check: 51.5 CPU-s of a cold
make test, 2026-11-29, 2-core AMD EPYC Zen 4, ExecuTorch's share 16).
The nightly sets CONVDIFF_PROBE_ALL_RANKS=1 and measures every cell on every backend (issue 26: tiers
that fit).
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from backends.base import Capabilities
from backends.registry import get_backend, installed_backends
from harness.commands.probe.cells import Cell, probe, probe_cells
from harness.commands.probe.declared import declared
from harness.model.build import make_case
from harness.model.case import OPS, Case

from .direct_attempts import CONTROL, CONTROL_FOR, ROUTES, script
from .helpers import run_named_scripts

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_probe")

ROOT = Path(__file__).resolve().parents[1]
CELLS = probe_cells()
BY_ID = {c.id: c for c in CELLS}


@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, Cell]]:
    names = installed_backends()
    if not names:
        pytest.skip("no framework installed")
    if os.environ.get("CONVDIFF_PROBE_ALL_RANKS", "") not in ("", "0"):
        results, skipped = probe(names, "cpu", cells=CELLS)
    else:
        results, skipped = probe(names, "cpu", cells=[c for c in CELLS if c.rank == 2], select=make_test_cells)
    assert results, skipped
    return results


def make_test_cells(name: str, cell: Case) -> bool:
    """make test's share of the 2-D cells: every cell on an eager backend; on a compiled path, those
    its declaration says no to (the module doc)."""
    backend = get_backend(name)
    return not backend.builds_per_case or declared(backend.capabilities, cell, "cpu", backend.epilogue_ops) is False


def test_make_test_cells_keep_what_the_declaration_leaves_open() -> None:
    """Hand-derived: torch (eager) keeps every cell; tvm, which declares every 2-D cell, keeps none;
    litert keeps its float64 cell (declared no) and its dilated transposed cell (declared no); executorch,
    whose dtypes carry notes (float32 (XNNPACK), ...) that leave every cell undecided, keeps none."""
    two_d = [c for c in CELLS if c.rank == 2]
    assert all(make_test_cells("torch", c) for c in two_d)
    assert not any(make_test_cells("tvm", c) for c in two_d)
    kept = {c.id for c in two_d if make_test_cells("litert", c)}
    assert {"conv2d_float64", "conv_transpose2d_dil2"} <= kept and "conv2d_pad1" not in kept
    assert not any(make_test_cells("executorch", c) for c in two_d)


def test_cells_cover_every_op_rank_and_feature() -> None:
    """The fixed set, checked by hand-derived facts: 22 variants per op, 26 per transposed op."""
    assert len(CELLS) == 3 * 22 + 3 * 26
    for op in OPS:
        mine = {c.id.removeprefix(op + "_"): c for c in CELLS if c.op == op}
        assert {"pad1", "pad_asym", "same", "valid", "same_s2", "dil2", "groups2", "channels_last",
                "float64", "float16", "bfloat16", "bias"} <= set(mine)
        assert mine["pad_asym"].padding == ((1, 0),) * mine["pad1"].rank
        assert mine["groups2"].groups == 2 and mine["float16"].dtype == "float16"
        assert mine["epilogue_bn_act"].epilogue == ("batch_norm", "relu6") and mine["epilogue_affine"].bias
        if op.startswith("conv_transpose"):
            assert mine["outpad1"].output_padding == (1,) * mine["pad1"].rank
            assert mine["same_k1_s2"].geometry is not None and any(mine["same_k1_s2"].geometry.extend)


def test_declared_reads_the_prose_it_can_decide() -> None:
    caps = Capabilities(groups="conv1d/2d (filter I/g); conv3d, transpose: none", dilation="conv, transpose",
                        dtypes=("float32", "float16 (cuda only)", "float64, bfloat16: where registered"),
                        output_padding="none", layouts=("channels_last",))
    case = lambda **kw: make_case(**{"op": "conv2d", "in_channels": 4, "out_channels": 4, "input_size": 6,  # noqa: E731
                                     "kernel_size": 3, "layout": "channels_last", **kw})
    assert declared(caps, case(groups=2, op="conv3d"), "cpu") is False
    assert declared(caps, case(groups=2, op="conv_transpose2d"), "cpu") is False
    assert declared(caps, case(groups=2), "cpu") is None          # qualified: undecided
    assert declared(caps, case(dilation=2), "cpu") is True
    assert declared(caps, case(dtype="float16"), "cpu") is False  # cuda only
    assert declared(caps, case(dtype="float16"), "cuda") is True
    assert declared(caps, case(dtype="bfloat16"), "cpu") is None
    assert declared(caps, case(layout="channels_first"), "cpu") is False
    assert declared(caps, case(op="conv_transpose2d", stride=2, output_padding=1), "cpu") is False


def test_declared_and_measured_agree(measured: dict[str, dict[str, Cell]]) -> None:
    disagree = []
    for name, cells in measured.items():
        caps, ops = get_backend(name).capabilities, get_backend(name).epilogue_ops
        for cid, cell in cells.items():
            said = declared(caps, BY_ID[cid], "cpu", ops)
            if said is False and cell.result != "unsupported":
                disagree.append(f"{name} {cid}: --capabilities says no, --probe measured {cell.result}")
            if said is True and cell.result == "unsupported":
                disagree.append(f"{name} {cid}: --capabilities says yes, --probe measured unsupported ({cell.detail})")
    assert not disagree, "\n".join(disagree)


def _attempt(route: str, cases: list, tmp_path: Path) -> list[dict]:
    """The route's direct attempt on `cases`, a script in a process of its own that imports its framework
    and nothing else of ours but the oracle (forked from an interpreter that imported the same
    framework: tests/helpers.py run_named_scripts)."""
    data = tmp_path / f"{route}.pkl"
    data.write_bytes(pickle.dumps(cases))
    source = f"import sys\nsys.argv[1:] = [{str(ROOT)!r}, {str(data)!r}]\n" + script(route)
    [(rc, out)] = run_named_scripts([(f"direct_{route.replace('-', '_')}", source)], tmp_path)
    assert rc == 0, f"{route}: the direct attempt itself failed:\n{out[-3000:]}"
    return json.loads([line for line in out.splitlines() if line.startswith("[")][-1])


def test_no_declared_unsupported_cell_is_expressible(measured: dict[str, dict[str, Cell]], tmp_path: Path) -> None:
    from .direct_attempts import DIRECT

    cells: dict[str, list[tuple[str, str]]] = {}  # backend -> its declared-unsupported cells
    for name, results in measured.items():
        if get_backend(name).quantized and not get_backend(name).capabilities.dtypes[0].startswith("float"):
            continue  # a quantized-only target: float cells are outside its scope, not a capability claim
        ops = get_backend(name).capabilities.ops  # a variant's scope is not a capability claim
        # the direct attempts express the conv alone: an epilogue cell is outside what they can show
        cells[name] = [cid for cid, cell in results.items()
                       if cell.result == "unsupported" and BY_ID[cid].op in ops and not BY_ID[cid].epilogue]
    routes = {name: ROUTES.get(name, (name,)) for name, ids in cells.items() if ids}
    missing = sorted({r for rs in routes.values() for r in rs if r not in DIRECT})
    assert not missing, f"cells declared unsupported with no direct attempt written for: {missing}"
    outcome: dict[tuple[str, str], dict] = {}
    for route in sorted({r for rs in routes.values() for r in rs}):
        control = CONTROL_FOR.get(route, CONTROL)
        ids = sorted({cid for name, rs in routes.items() if route in rs for cid in cells[name]} - set(control))
        for o in _attempt(route, [BY_ID[c] for c in [*control, *ids]], tmp_path):
            outcome[(route, o["id"])] = o
        for cid in control:
            o = outcome[(route, cid)]
            assert o["accepted"] and o["matches"], f"{route}: the direct attempt gets the plain cell {cid} wrong ({o['message']})"
    fooled = [f"{name} {cid}: declared unsupported ({measured[name][cid].detail}), but "
              + " + ".join(rs) + " accept it and give the oracle's answer"
              for name, rs in routes.items() for cid in cells[name]
              if all(outcome[(r, cid)]["accepted"] and outcome[(r, cid)]["matches"] for r in rs)]
    assert not fooled, "\n".join(fooled)


def test_run_table_shows_a_cached_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's Run table line comes from the probe cache only (no probe runs during a run)."""
    from harness.commands.probe.cells import cache_path, run_table_entry

    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    assert run_table_entry(["torch-cpu"]) == {}
    path = cache_path("torch", "cpu", CELLS)
    assert path is not None
    path.parent.mkdir(parents=True)
    cells = {c.id: {"result": "native", "detail": "", "status": "pass"} for c in CELLS}
    cells[CELLS[0].id] = {"result": "unsupported", "detail": "why", "status": "unsupported"}
    path.write_text(json.dumps({"cells": cells}))
    assert run_table_entry(["torch-cpu", "paddle-cpu"]) == {
        "capability_probe": f"torch-cpu: {len(CELLS) - 1} native, 1 unsupported (convdiff backends --probe)"}
