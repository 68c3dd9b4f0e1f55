"""The report's Markdown: the body a maintainer reads (above the first `<details`), then the details.

Body, in order: the title; the prose (what happens, expected, mechanism, the symptoms of a shared root), one
line per paragraph; the snippet's code and its output here; the blocks the tracker asks for beside it (IREE's
.mlir and command line, TVM's Relax script); the environment in the tracker's form; what the other
implementations do; the ask with the newest release checked; links. The snippet is shown as `repro.py`.
"""

from __future__ import annotations

import re

from reports.upstream.details import details
from reports.upstream.model import Block, Report, ScriptRun
from reports.upstream.noise import without_banners
from reports.upstream.others import VERDICTS, disagreement, related, table

OUTPUT_LIMIT = 4_000  # characters of the snippet's output shown (its head and tail)
SNIPPET_NAME = "repro.py"


def fence(text: str, lang: str = "") -> list[str]:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return [ticks + lang, text.rstrip("\n"), ticks]


def clipped(output: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(output) <= limit:
        return output
    return f"{output[: limit // 2]}\n... [{len(output) - limit} characters left out] ...\n{output[-limit // 2:]}"


def one_line(text: str) -> str:
    return " ".join(text.split())


def run_block(run: ScriptRun) -> str:
    """The output of a run and how it ended, as one text block, the frameworks' start-up banners left out
    (noise.py)."""
    out = clipped(without_banners(run.output).rstrip("\n"))
    return (out + "\n" if out else "") + f"[{run.ending()}]"


def _block(block: Block) -> list[str]:
    return [f"**{block.caption}**", "", *fence(block.text, block.lang), ""]


def _others(report: Report) -> list[str]:
    others = report.others
    if others is None:
        return []
    shown = related(others.outcomes)
    rows = table(shown, others.reported)
    if not rows:
        return []
    elsewhere = len([o for o in others.outcomes if o.verdict in VERDICTS]) - len([o for o in shown if o.verdict in VERDICTS])
    head = "**Other implementations**, same convolution" + (
        f" ({elsewhere} more fail for other reasons, in the details):" if elsewhere else ":")
    said = disagreement(others.reported, shown, others.spec) if others.spec else ""
    return [head, "", *rows, "", *([said, ""] if said else [])]


def render(report: Report) -> str:
    lines = [f"# {one_line(report.title)}", ""]
    for label, text in report.prose:
        lines += [one_line(text) if label == "What happens" else f"**{label}:** {one_line(text)}", ""]
    if report.symptoms:
        lines += ["**Symptoms:**", "", *[f"- {one_line(s)}" for s in report.symptoms], ""]
    if report.code.strip():
        lines += [*fence(report.code, "python"), ""]
        lines += ["Output:", "", *fence(run_block(report.run), "text"), ""]
    for block in report.extra:
        lines += _block(block)
    if report.environment is not None:
        lines += _block(report.environment)
    lines += _others(report)
    ask = f"**Ask:** {one_line(report.ask)}" if report.ask else ""
    latest = f"Newest release: {report.latest_short}." if report.latest_short else ""
    if ask or latest:
        lines += [" ".join(p for p in (ask, latest) if p), ""]
    if report.links:
        lines += ["Related: " + "; ".join(one_line(link) for link in report.links), ""]
    lines += details(report)
    return "\n".join(lines).rstrip("\n") + "\n"


def ran(markdown: str) -> bool:
    """Whether a report's body shows a run of its snippet (an output block ending in how the run ended)."""
    ending = r"^\[(exit status -?\d+|killed by [\w ]+|timed out after [\d.]+ s)\]$"
    return re.search(ending, body_of(markdown), re.M) is not None


def body_of(markdown: str) -> str:
    """The body: everything above the first `<details`."""
    return markdown.split("<details", 1)[0]
