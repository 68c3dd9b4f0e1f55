"""report.html: one self-contained page (inline CSS, JS and SVG; no network) rendered with jinja2.

The view model comes from reports.model; this module only wires in the plot and
script makers and renders the template with autoescaping on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from harness.execution.records import Record
from reports.model import Report, build_report, load_known_info

TEMPLATES = Path(__file__).parent / "templates"
DEFAULT_KNOWN = Path("cases") / "known_issues.yaml"
SEPARATOR = "\x1e"  # ASCII record separator between detail panels


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every case id, tag, file name and message is user data
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["inf"] = math.inf
    return env


def render(report: Report) -> str:
    """The page. Detail panels sit as raw HTML in one inert <script type="text/plain"> block, split by
    SEPARATOR, and enter the DOM on first open: a 20,000-result report builds only its summary rows at load."""
    env = environment()
    macros = env.get_template("detail.html.j2").module
    bodies = []
    for f in report.findings + report.unsupported:
        for m in f.members:
            m.key = len(bodies)
            body = str(macros.unsupported(m) if f.status == "unsupported" else macros.detail(m))
            # user data is already escaped; this keeps our own markup from ending the block early
            bodies.append(body.replace(SEPARATOR, "").replace("</script", "<\\/script").replace("<!--", "&lt;!--"))
    return env.get_template("report.html.j2").render(r=report, details=markupsafe.Markup(SEPARATOR.join(bodies)))


def _script(rec: Record) -> str | None:
    from reports.repro import ReproUnavailable, script_for

    try:
        return script_for(rec)
    except ReproUnavailable:
        return None


def build(records: Sequence[Record], summary: dict[str, Any], known_path: Path | None = DEFAULT_KNOWN) -> Report:
    from reports.plots import where_svg

    # The run records the known issues it used; an older summary falls back to the file.
    known_info = {k: tuple(v) for k, v in summary.get("known_issues", {}).items()}
    if not known_info and known_path is not None and known_path.exists():
        known_info = load_known_info(known_path)
    from reports.drift_plot import drift_svgs

    return build_report(records, summary, known_info, script_for=_script, plot_for=where_svg,
                        drift_plots=drift_svgs(summary.get("drift", [])))


def write_html(path: Path, records: Sequence[Record], summary: dict[str, Any],
               known_path: Path | None = DEFAULT_KNOWN) -> None:
    path.write_text(render(build(records, summary, known_path)), encoding="utf-8")
