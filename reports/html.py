"""report.html: one self-contained page (inline CSS, JS, SVG and data; no network), rendered with jinja2.

The view model comes from reports.model; the compressed data the page's script decodes comes from
reports.payload. This module wires in the plot and script makers and renders the templates with
autoescaping on: the headline, the overview, the matrix and one header per finding are HTML; the result
lists and detail panels are built in the browser from the data, on demand.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from harness.execution.records import Record
from reports.model import STATUS_CODE, STATUS_ORDER, Report, build_report, ratio_text
from reports.overview import UNEXPECTED_NAMED
from reports.payload import MESSAGE

TEMPLATES = Path(__file__).parent / "templates"
DEFAULT_KNOWN = Path("cases") / "known_issues.yaml"


def _num(n: int) -> str:
    return f"{n:,}"


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """The templates compiled once, under the cache directory (keyed by each template's source): compiling
    them took 0.13 CPU-s of every run's report (2-core AMD EPYC Zen 4, 2026-11-29), loading 5 ms."""
    from backends.artifacts import cache_base

    base = cache_base()
    if base is None:
        return None
    try:
        (base / "jinja").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(base / "jinja"))


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,  # every case id, tag, file name and message is user data
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(inf=math.inf, STATUS_CODE=STATUS_CODE, STATUS_ORDER=STATUS_ORDER, UNEXPECTED_NAMED=UNEXPECTED_NAMED,
                       MESSAGE=MESSAGE)
    env.filters["num"] = _num
    env.filters["ratio"] = ratio_text
    return env


def _static(name: str) -> markupsafe.Markup:
    """A file of ours inlined as is (CSS, JS): no user data in it, and no jinja syntax to trip over."""
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    assert "</script" not in text and "</style" not in text, name
    return markupsafe.Markup(text)


def detail_bodies(report: Report) -> list[str]:
    """Every listed result's detail panel as escaped HTML, in page order (ResultView.key)."""
    macros = environment().get_template("detail.html.j2").module
    return [str(macros.unsupported(m) if f.status == "unsupported" else macros.detail(m))
            for f in report.findings + report.unsupported for m in f.members]


def render(report: Report) -> str:
    from reports.payload import payload

    index, chunks = payload(report, detail_bodies(report))
    return environment().get_template("report.html.j2").render(
        r=report, ov=report.overview, index=index, chunks=chunks, css=_static("report.css"), js=_static("report.js"))


def _script(rec: Record) -> str | None:
    from reports.repro.script import ReproUnavailable, script_for

    try:
        return script_for(rec)
    except ReproUnavailable:
        return None


def build(records: Sequence[Record], summary: dict[str, Any], known_path: Path | None = DEFAULT_KNOWN) -> Report:
    from reports.drift_plot import drift_svgs
    from reports.known import entry_info, load_file_info
    from reports.plots import where_svg

    # The run records the known issues it used; an older summary falls back to the file.
    known_info = entry_info(summary.get("known_issues", {}))
    if not known_info and known_path is not None and known_path.exists():
        known_info = load_file_info(known_path)
    return build_report(records, summary, known_info, script_for=_script, plot_for=where_svg,
                        drift_plots=drift_svgs(summary.get("drift", [])))


def write_html(path: Path, records: Sequence[Record], summary: dict[str, Any],
               known_path: Path | None = DEFAULT_KNOWN) -> None:
    path.write_text(render(build(records, summary, known_path)), encoding="utf-8")
