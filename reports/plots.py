"""Pictures of where errors sit, as inline SVG (no files, no network).

From a record's `where`: the error/bound profile along each axis (max over the other
axes) and, when the record carries one, a heat map of the ratio over a 2-D slice
through the worst element. matplotlib (Agg) draws the worst members of each finding;
the rest get a hand-written sparkline, because a matplotlib figure costs ~0.1 s and
a nightly report may hold thousands of failures.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import math
import re
from html import escape
from typing import Any

from harness.execution.records import Record
from reports.svg_cache import cached_svg

_salt = itertools.count()
CLIP = 1e4  # plotted stand-in for a non-finite ratio (NaN / Inf outputs)


def _finite(values: list[Any]) -> list[float]:
    return [CLIP if v is None or not math.isfinite(v) else max(float(v), 1e-3) for v in values]


def _strip(svg: str) -> str:
    """Drop the XML prolog and doctype so the SVG can sit inside HTML."""
    start = svg.find("<svg")
    return re.sub(r"<!--.*?-->", "", svg[start:] if start >= 0 else svg, flags=re.S)


def where_svg(rec: Record, full: bool) -> str:
    """SVG markup for one result's `where` ('' when it has none)."""
    where = rec.where
    if not where or not where.get("axes"):
        return ""
    return matplotlib_svg(where) if full else sparklines(where)


def matplotlib_svg(where: dict[str, Any]) -> str:
    """The figure for `where`, drawn once per process for each distinct `where` (a report, and the tests'
    reports, meet the same profile more than once: 107 figures of 12 distinct ones in the report tests, at
    ~0.3 s each); every copy gets ids of its own, so figures inlined in one page never share one."""
    where_json = json.dumps(where)  # key order kept: it is the panels' order
    svg = cached_svg("where", where_json, lambda: _drawn(where_json))
    salt = next(_salt)
    return _REFERENCED.sub(lambda m: f"{m.group(1)}-{salt}", svg)


# the ids matplotlib derives from svg.hashsalt (clip paths, markers, images) and the references to them
_REFERENCED = re.compile(r"((?:id=\"|#)(?:p|m|image)[0-9a-f]{10})(?=[\")])")


@functools.lru_cache(maxsize=256)
def _drawn(where_json: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    where = json.loads(where_json)
    axes = {n: a for n, a in where["axes"].items() if a.get("length", 2) > 1} or where["axes"]  # N=1 says nothing
    heat = where.get("heat") or {}
    values = heat.get("values") or []
    panels = len(axes) + (1 if values and values[0] else 0)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cd", "font.size": 7}):
        fig, subplots = plt.subplots(1, panels, figsize=(1.75 * panels, 1.55), squeeze=False)
        for ax, (name, info) in zip(subplots[0], axes.items()):
            logs = [math.log10(v) for v in _finite(info.get("profile", []))]
            ax.bar(range(len(logs)), [v + 3 for v in logs], bottom=-3, width=1.0,
                   color=["#c0392b" if v > 0 else "#7f8c8d" for v in logs])
            ax.axhline(0.0, color="#2c3e50", lw=0.7, ls="--")
            ax.set_ylim(-3, max([1.0, *logs]) + 0.3)
            shown = len(logs) < info.get("length", len(logs))
            ax.set_title(f"{name} ({info.get('length')}{', first 64' if shown else ''})", fontsize=7)
            ax.tick_params(labelsize=6)
        subplots[0][0].set_ylabel("log10 err/bound", fontsize=6)
        if panels > len(axes):
            ax = subplots[0][-1]
            grid = [[math.log10(v) if v is not None and v > 0 else (6.0 if v is None else -3.0) for v in row]
                    for row in values]
            im = ax.imshow(grid, cmap="magma", vmin=-3, vmax=max(1.0, max(map(max, grid))), aspect="auto",
                           interpolation="nearest")
            a0, a1 = heat.get("axes", ["", ""])
            fixed = ", ".join(f"{k}={v}" for k, v in heat.get("fixed", {}).items())
            ax.set_title(f"log10 ratio, {a0}x{a1}" + (f" @ {fixed}" if fixed else ""), fontsize=6)
            ax.set_xlabel(a1 + (f" (/{heat['block'][1]})" if heat.get("block", [1, 1])[1] > 1 else ""), fontsize=6)
            ax.set_ylabel(a0 + (f" (/{heat['block'][0]})" if heat.get("block", [1, 1])[0] > 1 else ""), fontsize=6)
            ax.tick_params(labelsize=5)
            fig.colorbar(im, ax=ax, fraction=0.08, pad=0.02, ticks=[-3, 0, 3, 6]).ax.tick_params(labelsize=5)
        for ax in subplots[0]:
            ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
            ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
        fig.subplots_adjust(left=0.5 / (1.75 * panels), right=0.97, bottom=0.2, top=0.84, wspace=0.45)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
        plt.close(fig)
    return _strip(buf.getvalue())


def sparklines(where: dict[str, Any], width: int = 90, height: int = 24) -> str:
    """One tiny log-scale profile per axis: a grey line, red dots beyond the bound, dashed bound line."""
    parts = []
    for name, info in where["axes"].items():
        logs = [math.log10(v) for v in _finite(info.get("profile", []))]
        if len(logs) < 2:
            continue
        lo, hi = min(min(logs), 0.0) - 0.2, max(max(logs), 0.0) + 0.2
        step = width / max(len(logs) - 1, 1)
        pts = [(round(i * step, 1), round(height - (v - lo) / (hi - lo) * height, 1)) for i, v in enumerate(logs)]
        line = "M" + "L".join(f"{x} {y}" for x, y in pts)
        dots = "".join(f"M{x} {y}h0" for (x, y), v in zip(pts, logs) if v > 0)
        one = round(height - (0.0 - lo) / (hi - lo) * height, 1)
        parts.append(
            f'<svg class="spark" width="{width}" height="{height + 12}" role="img">'
            f'<title>{escape(name)}: max error/bound per index</title>'
            f'<path d="M0 {one}H{width}" stroke="#2c3e50" stroke-dasharray="2,2" stroke-width="0.6"/>'
            f'<path d="{line}" fill="none" stroke="#7f8c8d" stroke-width="1"/>'
            + (f'<path d="{dots}" stroke="#c0392b" stroke-width="3.5" stroke-linecap="round"/>' if dots else "")
            + f'<text x="0" y="{height + 10}" font-size="9">{escape(name)} ({info.get("length")})</text></svg>')
    return "".join(parts)
