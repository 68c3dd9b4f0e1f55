"""`convdiff backends --probe`: the measured capability table.

Each backend runs one tiny case per capability cell, through the real worker and judge,
on a fixed set (`probe_cells`) that varies one thing at a time from a plain case and
adds the pairs adapters branch on (SAME with stride 2, transposed SAME with a kernel
shorter than the stride, output_padding with asymmetric crops, dilation with stride).
Every op and rank is covered, so a per-rank table in an adapter is probed too.

A cell's outcome, from the record:
  native       the framework ran it in its own form (and the judge's status is kept);
  identity     the adapter used an exact identity (which one: the record's notes);
  unsupported  the adapter declined (its reason);
  rejected     the framework raised (its first line); error/crash/timeout as themselves.

Results are cached per backend, device, framework version and adapter source under
`$CONVDIFF_CACHE/probe/` (default `.convdiff-cache/probe/`), so a warm probe reads files.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from backends.artifacts import cache_base
from backends.registry import get_backend
from harness.execution.records import Record
from harness.model.build import make_case
from harness.model.case import OPS, Case, op_is_transpose, op_rank

FORMAT = 1
IDENTITY = "# exact identity: "
SIZE = {1: 7, 2: 7, 3: 5}  # small, odd (SAME pads unevenly), large enough for kernel 3 dilated by 2


def _variants(transpose: bool, rank: int) -> dict[str, dict[str, Any]]:
    """Cell name -> the fields that differ from the plain case (padding 1, stride 1, float32, ...)."""
    asym = [[1, 0]] * rank
    cells: dict[str, dict[str, Any]] = {
        "pad1": {}, "pad_asym": {"padding": asym}, "same": {"padding": "same"}, "valid": {"padding": "valid"},
        "pad1_s2": {"stride": 2}, "pad_asym_s2": {"padding": asym, "stride": 2},
        "same_s2": {"padding": "same", "stride": 2}, "valid_s2": {"padding": "valid", "stride": 2},
        "dil2": {"dilation": 2}, "dil2_s2": {"dilation": 2, "stride": 2},
        "groups2": {"groups": 2, "in_channels": 4, "out_channels": 4},
        "groups2_s2": {"groups": 2, "in_channels": 4, "out_channels": 4, "stride": 2},
        "channels_last": {"layout": "channels_last"},
        "channels_last_same_s2": {"layout": "channels_last", "padding": "same", "stride": 2},
        "float64": {"dtype": "float64"}, "float16": {"dtype": "float16"}, "bfloat16": {"dtype": "bfloat16"},
        "bias": {"bias": True},
        # the epilogue column: constants a compiler folds, batch norm + activation, the
        # transcendental activations, a residual input
        "epilogue_affine": {"bias": True, "epilogue": ["scale", "shift", "mul_scalar"]},
        "epilogue_bn_act": {"epilogue": ["batch_norm", "relu6"]},
        "epilogue_act": {"epilogue": ["gelu", "silu", "hardswish"]},
        "epilogue_residual": {"epilogue": ["residual", "leaky_relu"]},
    }
    if transpose:
        cells |= {
            "outpad1": {"stride": 2, "output_padding": 1},
            "outpad1_asym": {"stride": 2, "output_padding": 1, "padding": asym},
            "outpad1_groups2": {"stride": 2, "output_padding": 1, "groups": 2, "in_channels": 4, "out_channels": 4},
            "same_k1_s2": {"padding": "same", "stride": 2, "kernel_size": 1},
        }
    return cells


def probe_cells() -> list[Case]:
    """The fixed probe set: every op x rank, each variant as one tiny integer-valued case."""
    out = []
    for op in OPS:
        rank = op_rank(op)
        base = {"op": op, "batch": 1, "in_channels": 2, "out_channels": 2, "input_size": SIZE[rank],
                "kernel_size": 3, "padding": 1, "data": "integers", "seed": 1}
        for name, over in _variants(op_is_transpose(op), rank).items():
            out.append(make_case(file="<probe>", id=f"{op}_{name}", **{**base, **over}))
    return out


@dataclass
class Cell:
    result: str   # native | identity | unsupported | rejected | error | crash | timeout
    detail: str   # which identity / the reason / the first line; empty for native
    status: str   # the judge's status (pass, mismatch, ...)


def classify(rec: Record) -> Cell:
    notes = [ln.removeprefix(IDENTITY) for ln in rec.translation.splitlines() if ln.startswith(IDENTITY)]
    if rec.status in ("unsupported", "rejected", "error", "crash", "timeout"):
        return Cell(rec.status, rec.message.strip().splitlines()[0] if rec.message.strip() else "", rec.status)
    if notes:
        return Cell("identity", "; ".join(notes), rec.status)
    return Cell("native", "", rec.status)


@functools.cache
def _backend_imports(src: str) -> tuple[str, ...]:
    """The backends/ modules a module's source imports (parsed once per source text: a test session asks
    for the digests of every backend tens of times)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.append(f"backends.{node.module}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("backends."):
            found.append(node.module)
    return tuple(found)


def adapter_digest(name: str) -> str:
    """Digest of the adapter's source and the backends/ modules it imports (an edit re-probes it)."""
    cls = type(get_backend(name))
    todo = [m.__module__ for m in cls.__mro__ if m.__module__.startswith("backends.")]
    seen: set[str] = set()
    h = hashlib.sha256()
    while todo:
        mod = todo.pop()
        if mod in seen or mod not in sys.modules:
            continue
        seen.add(mod)
        src = inspect.getsource(sys.modules[mod])
        h.update(src.encode())
        todo.extend(_backend_imports(src))
    return h.hexdigest()[:16]


def cache_path(name: str, device: str, cells: Sequence[Case]) -> Path | None:
    base = cache_base()
    if base is None:
        return None
    backend = get_backend(name)
    cell_key = hashlib.sha256(json.dumps([c.id for c in cells]).encode()).hexdigest()[:8]
    safe = name.replace(":", "_")
    return base / "probe" / f"{safe}-{device}-{backend.version()}-{adapter_digest(name)}-{cell_key}-{FORMAT}.json"


def probe(names: Iterable[str], device: str = "cpu", cells: Sequence[Case] | None = None,
          timeout: float = 120.0, show_progress: bool = False,
          select: Callable[[str, Case], bool] | None = None) -> tuple[dict[str, dict[str, Cell]], dict[str, str]]:
    """({backend: {cell id: Cell}}, {backend: why it did not run}); cached results where they exist.
    `select(backend, cell)`: which cells each backend measures (default: all of them)."""
    from harness.execution.runner import run_cases
    from harness.judge.verdict import Verdicts

    cells = list(cells or probe_cells())
    mine = {name: [c for c in cells if select is None or select(name, c)] for name in names}
    results: dict[str, dict[str, Cell]] = {}
    skipped: dict[str, str] = {}
    todo = []
    for name in mine:
        reason = get_backend(name).unavailable_reason()
        if reason:
            skipped[name] = reason
            continue
        if not mine[name]:
            results[name] = {}
            continue
        path = cache_path(name, device, mine[name])
        if path is not None and path.exists():
            results[name] = {k: Cell(**v) for k, v in json.loads(path.read_text())["cells"].items()}
        else:
            todo.append(name)
    if todo:
        from harness.execution.progress import Progress

        found: dict[str, dict[str, Cell]] = {n: {} for n in todo}
        progress = Progress({f"{n}-{device}": len(mine[n]) for n in todo}) if show_progress else None

        def collect(rec: Record) -> None:
            found[rec.backend][rec.case_id] = classify(rec)
            if progress is not None:
                progress.update(rec.status, f"{rec.backend}-{rec.device}")

        try:
            wanted = {n: {c.id for c in mine[n]} for n in todo}
            info = run_cases([c for c in cells if any(c.id in ids for ids in wanted.values())],
                             [(n, device) for n in todo], collect, Verdicts(), timeout=timeout,
                             select=lambda n, c: c.id in wanted[n])
        finally:
            if progress is not None:
                progress.close()
        for target, reason in info.skipped.items():
            skipped[target.rsplit("-", 1)[0]] = reason
        for name in todo:
            if name in skipped or len(found[name]) != len(mine[name]):
                continue
            results[name] = found[name]
            path = cache_path(name, device, mine[name])
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                doc = {"backend": name, "device": device, "version": get_backend(name).version(),
                       "cells": {k: asdict(v) for k, v in found[name].items()}}
                path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return results, skipped


def to_json(results: dict[str, dict[str, Cell]], device: str) -> dict[str, Any]:
    return {name: {"version": get_backend(name).version(), "device": device,
                   "cells": {k: asdict(v) for k, v in cells.items()}} for name, cells in results.items()}


CODE = {"native": "N", "identity": "I", "unsupported": "U", "rejected": "R"}


def _code(cell: Cell) -> str:
    code = CODE.get(cell.result, "E")
    return code if cell.status in ("pass", cell.result) else code + "!"  # ran but did not pass


def format_probe(results: dict[str, dict[str, Cell]], skipped: dict[str, str]) -> str:
    """A matrix (cells x backends, one letter each), then every non-native outcome with its detail."""
    names = list(results)
    if not names:
        return "\n".join(f"{n}: not probed: {r}" for n, r in skipped.items())
    ids = list(next(iter(results.values())))
    width = max(map(len, ids))
    cols = [f"B{i + 1}" for i in range(len(names))]
    lines = ["N native, I exact identity, U unsupported, R rejected, E error/crash/timeout; ! = ran, did not pass",
             *(f"  {c} = {n}" for c, n in zip(cols, names)), "",
             f"{'cell':<{width}}  " + " ".join(f"{c:>3}" for c in cols)]
    for cid in ids:
        lines.append(f"{cid:<{width}}  " + " ".join(f"{_code(results[n][cid]) if cid in results[n] else '-':>3}"
                                                    for n in names))
    for n in names:
        counts: dict[str, int] = {}
        groups: dict[tuple[str, str, str], list[str]] = {}
        for cid, cell in results[n].items():
            counts[cell.result] = counts.get(cell.result, 0) + 1
            if cell.result != "native" or cell.status != "pass":
                groups.setdefault((cell.result, cell.status, cell.detail), []).append(cid)
        lines += ["", f"{n} {get_backend(n).version()}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
        for (result, status, detail), cids in groups.items():
            verdict = "" if status in ("pass", result) else f" [{status}]"
            lines.append(f"  {result}{verdict}{f': {detail}' if detail else ''}")
            lines.append(f"    {', '.join(cids)}")
    lines += [f"{n}: not probed: {r}" for n, r in skipped.items()]
    return "\n".join(lines)


def summary_line(cells: dict[str, Cell]) -> str:
    """One line for the report's Run table: counts per outcome."""
    counts: dict[str, int] = {}
    for c in cells.values():
        counts[c.result] = counts.get(c.result, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


def cached_summaries(names: Iterable[str], device: str) -> dict[str, str]:
    """Probe summaries that are already cached for these backends (no probe is run)."""
    cells = probe_cells()
    out = {}
    for name in names:
        try:
            path = cache_path(name, device, cells)
        except Exception:  # noqa: BLE001 - an unknown or broken backend has no probe
            continue
        if path is not None and path.exists():
            out[name] = summary_line({k: Cell(**v) for k, v in json.loads(path.read_text())["cells"].items()})
    return out


def probe_command(names: list[str], json_file: str | None, device: str = "cpu") -> int:
    """`convdiff backends --probe`: print the table, optionally write it as JSON; 1 if a backend failed to run."""
    import time

    start = time.monotonic()
    results, skipped = probe(names, device, show_progress=True)
    print(format_probe(results, skipped))
    print(f"\nprobed {len(results)} backends x {len(probe_cells())} cells in {time.monotonic() - start:.1f} s")
    if json_file:
        Path(json_file).write_text(json.dumps({"skipped": skipped, "backends": to_json(results, device)},
                                              indent=1, sort_keys=True) + "\n")
    return 0


def run_table_entry(targets: Iterable[str]) -> dict[str, str]:
    """For a run's summary fingerprint (the report's Run table): the cached probe of each target, if any."""
    lines = []
    for target in targets:
        name, _, device = target.rpartition("-")
        try:
            line = cached_summaries([name], device).get(name)
        except Exception:  # noqa: BLE001 - a probe that cannot be read is left out, never fatal to a run
            line = None
        if line:
            lines.append(f"{target}: {line}")
    return {"capability_probe": "; ".join(lines) + " (convdiff backends --probe)"} if lines else {}
