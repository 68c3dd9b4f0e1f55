"""Figures on disk, so a warm run's report draws no figure an earlier run drew (issue 26).

A figure is a pure function of the data it shows: an entry is named by a digest of that data (as JSON),
matplotlib's version and the source of the modules that draw (reports/plots.py, reports/drift_plot.py),
so changed data, a new matplotlib or a change to the drawing code misses and draws again. Entries live in
`$CONVDIFF_CACHE/figures/`, written to a temporary name and renamed (a killed run never leaves half
an SVG); `CONVDIFF_CACHE=off` draws every figure. Measured on the full corpus' report (AVX2 EPYC): 14
matplotlib figures, ~4 s of the report's 7 s, all hits on a warm run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

DRAWING_SOURCES = ("plots.py", "drift_plot.py")


@functools.cache
def _salt() -> str:
    h = hashlib.sha256()
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        h.update(importlib.metadata.version("matplotlib").encode())
    for name in DRAWING_SOURCES:
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()


def cached_svg(kind: str, data_json: str, draw: Callable[[], str]) -> str:
    """The SVG `draw()` makes for `data_json`, from the cache where an earlier run drew it."""
    from backends.artifacts import cache_base

    base = cache_base()
    if base is None:
        return draw()
    key = hashlib.sha256(f"{kind}\0{_salt()}\0{data_json}".encode()).hexdigest()[:32]
    path = base / "figures" / f"{kind}-{key}.svg"
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8")
    svg = draw()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(svg)
        os.replace(tmp, path)
    return svg
