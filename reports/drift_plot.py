"""Error growth plots: normalized error against accumulation length K, per backend, with theory.

One log-log panel per case family of cases/drift.yaml; every backend's curve is drawn
whatever it is, beside the probabilistic rounding envelope 4*sqrt(K) (the drift flag
line) and sqrt(K).
"""

from __future__ import annotations

import functools
import io
import json
from collections import defaultdict
from typing import Any

from reports.plots import _strip
from reports.svg_cache import cached_svg

MARKERS = "os^vD<>pPX*h"


def drift_svgs(curves: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """[(family, svg)] for the drift curves of a summary; [] when there are none."""
    families: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in curves:
        if len(c["points"]) >= 2:
            families[c["family"]].append(c)
    if not families:
        return []
    return [(family, cached_svg("drift", json.dumps([family, members], sort_keys=True),
                                functools.partial(_draw, family, members)))
            for family, members in sorted(families.items())]


def _draw(family: str, members: list[dict[str, Any]]) -> str:
    """One family's panel as SVG."""
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global state, and a cheaper import

    ks = sorted({p["K"] for c in members for p in c["points"]})
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"drift-{family}", "font.size": 7}):
        fig = Figure(figsize=(4.2, 2.8))
        ax = fig.subplots()
        ax.plot(ks, [4 * k**0.5 for k in ks], color="#c0392b", ls="--", lw=1, label="4·sqrt(K) (flag line)")
        ax.plot(ks, [k**0.5 for k in ks], color="#7f8c8d", ls=":", lw=1, label="sqrt(K)")
        for i, c in enumerate(sorted(members, key=lambda c: (c["backend"], c["device"]))):
            pts = sorted(c["points"], key=lambda p: p["K"])
            label = f"{c['backend']}-{c['device']}" + (" (DRIFT)" if c["flagged"] else "")
            ax.plot([p["K"] for p in pts], [max(p["e"], 1e-3) for p in pts], marker=MARKERS[i % len(MARKERS)],
                    ms=3, lw=1.2 if c["flagged"] else 0.8, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.minorticks_off()  # log minor ticks cost most of the drawing time, and say little here
        ax.set_xlabel("K = C_in/groups · prod(kernel)")
        ax.set_ylabel("max |err| / (u · scale)")
        ax.set_title(family)
        ax.legend(fontsize=5, loc="upper left", frameon=False)
        # fixed margins: tight_layout measured every text box and took most of the report's time
        fig.subplots_adjust(left=0.13, right=0.98, bottom=0.15, top=0.91)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return _strip(buf.getvalue())
