"""Upstream-ready report texts: a known issue's (`convdiff upstream ID`) and one result's (`convdiff repro --issue`).

The text is what a maintainer of the framework needs and nothing of convdiff's internals: a title, the project
and tracker it belongs to, the environment (versions, CPU, the host facts the defect depends on, read live), a
standalone script (NumPy plus the framework), its output and exit status on this host, then what happens,
what was expected, the mechanism as far as measured, where it shows, related threads and when it was checked.

A report built from `cases/upstream/<id>.py` takes its title and sections from the script's module docstring,
whose shape is fixed (cases/upstream/README.md):

    <Title, one line>

    Project: <owner/repo> (<tracker URL>)
    Upstream: none found ... | comment for <URL of the existing thread>
    Related: <URL> (<words>); ...   or   none
    Checked: <YYYY-MM-DD>, <versions>, searched <where>

    What happens: <paragraph>

    Expected: <paragraph>

    Mechanism: <paragraph>

    Host: <paragraph>

`parse_docstring` reads it and lists what departs from that shape. This module renders only; running scripts
and reading host facts is harness/commands/upstream.py's job.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

HEADER_FIELDS = ("Project", "Upstream", "Related", "Checked")
SECTIONS = ("What happens", "Expected", "Mechanism", "Host")
REPORT_SECTIONS = (*SECTIONS, "Related", "Checked")  # in the order the report shows them
OUTPUT_LIMIT = 12_000  # characters of a script's output kept in a report (the head and the tail)
_URL = re.compile(r"https?://\S+[^\s.,;:)\]]")
_HEADER_LINE = re.compile(r"(" + "|".join(HEADER_FIELDS) + r"):\s*(.*)")


@dataclass
class Docstring:
    """A script's module docstring, split into its parts; `problems` says where it departs from the shape
    ("line N: ..." relative to the file)."""

    title: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    sections: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def project(self) -> str:
        """The owner/repo of the Project line ('' when absent)."""
        m = re.match(r"([\w.-]+/[\w.-]+)", self.fields.get("Project", ""))
        return m.group(1) if m else ""

    @property
    def tracker_url(self) -> str:
        """The tracker URL of the Project line (default: the GitHub issues of its owner/repo)."""
        m = _URL.search(self.fields.get("Project", ""))
        return m.group(0) if m else (f"https://github.com/{self.project}/issues" if self.project else "")

    @property
    def comment_for(self) -> str:
        """The URL of the existing upstream thread the report is a comment for ('' for a new issue)."""
        m = re.match(r"comment for\s+(\S+)", self.fields.get("Upstream", ""), re.I)
        return m.group(1).rstrip(".,;") if m else ""


def parse_docstring(source: str) -> Docstring:
    """The docstring's parts and its departures from the contract's shape (an unparsable file: one problem)."""
    doc = Docstring()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        doc.problems.append(f"line {exc.lineno}: not valid Python: {exc.msg}")
        return doc
    text = ast.get_docstring(tree, clean=True)
    if not text:
        doc.problems.append("line 1: no module docstring")
        return doc
    node = tree.body[0].value  # type: ignore[attr-defined]
    raw = node.value
    first = node.lineno + raw[: len(raw) - len(raw.lstrip())].count("\n")  # the file line of its first text
    paragraphs = _paragraphs(text)
    title_line, title = paragraphs[0]
    if "\n" in title:
        doc.problems.append(f"line {first + title_line}: the title must be one line")
    doc.title = " ".join(title.split())
    rest = paragraphs[1:]
    header_line = first + (rest[0][0] if rest else 1)
    if rest and _HEADER_LINE.match(rest[0][1]):
        _header(doc, rest[0][1], header_line)
        rest = rest[1:]
    for name in HEADER_FIELDS:
        if name not in doc.fields:
            doc.problems.append(f"line {header_line}: missing the '{name}:' line after the title")
    current = None
    for line, para in rest:
        label = next((s for s in SECTIONS if para.startswith(f"{s}:")), None)
        if label is None:
            if current is None:
                doc.problems.append(f"line {first + line}: a paragraph before the first section (What happens:)")
                continue
            doc.sections[current] += "\n\n" + para  # a section may run over several paragraphs (a list, a table)
            continue
        if label in doc.sections:
            doc.problems.append(f"line {first + line}: '{label}:' appears twice")
        current = label
        doc.sections[label] = para[len(label) + 1:].strip()
    missing = [s for s in SECTIONS if s not in doc.sections]
    if missing:
        doc.problems.append(f"line {first}: missing section(s): {', '.join(s + ':' for s in missing)}")
    elif list(doc.sections) != list(SECTIONS):
        doc.problems.append(f"line {first}: sections out of order (want {', '.join(SECTIONS)})")
    return doc


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """(line offset, text) of each blank-line-separated paragraph."""
    out: list[tuple[int, str]] = []
    start, lines = 0, []
    for i, line in enumerate([*text.splitlines(), ""]):
        if line.strip():
            if not lines:
                start = i
            lines.append(line.rstrip())
        elif lines:
            out.append((start, "\n".join(lines)))
            lines = []
    return out


def _header(doc: Docstring, para: str, line: int) -> None:
    """Project / Upstream / Related / Checked lines; a line that starts with no label continues the one before."""
    key = None
    for i, text in enumerate(para.splitlines()):
        m = _HEADER_LINE.match(text)
        if m:
            key = m.group(1)
            if key in doc.fields:
                doc.problems.append(f"line {line + i}: '{key}:' appears twice")
            doc.fields[key] = m.group(2).strip()
        elif key is not None:
            doc.fields[key] += " " + text.strip()
        else:
            doc.problems.append(f"line {line + i}: expected one of {', '.join(f + ':' for f in HEADER_FIELDS)}")
    project, upstream, checked = (doc.fields.get(k, "") for k in ("Project", "Upstream", "Checked"))
    if "Project" in doc.fields and not re.match(r"[\w.-]+/[\w.-]+\s*(\(https?://\S+\))?\s*$", project):
        doc.problems.append(f"line {line}: Project must be 'owner/repo (tracker URL)', got '{project}'")
    if "Upstream" in doc.fields and not (upstream.lower().startswith("none found") or doc.comment_for.startswith("http")):
        doc.problems.append(f"line {line}: Upstream must be 'none found ...' or 'comment for <URL>', got '{upstream}'")
    if "Checked" in doc.fields and not re.match(r"\d{4}-\d{2}-\d{2}\b", checked):
        doc.problems.append(f"line {line}: Checked must begin with the date, YYYY-MM-DD, got '{checked}'")


# --- the report -------------------------------------------------------------------------------------------


@dataclass
class ScriptRun:
    """What running a script on this host gave: its exit status (None: not run, `note` says why; negative: a
    signal), its stdout and stderr together, the seconds it took, and whether it ran past its timeout."""

    exit: int | None = None
    output: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    note: str = ""

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.output

    def verdict(self) -> str:
        """One sentence: how the script ended and what that means under the exit contract."""
        if self.exit is None:
            return f"Not run: {self.note}." if self.note else "Not run."
        if self.timed_out:
            return f"Timed out after {self.seconds:.0f} s (killed)."
        if self.exit < 0:
            return f"Killed by signal {-self.exit} after {self.seconds:.1f} s."
        meaning = {0: "the defect does not show here", 1: "the defect shows"}.get(self.exit, "outside the 0/1 contract")
        tb = "; it printed a Python traceback" if self.traceback else ""
        return f"Exit status {self.exit} ({meaning}{tb}) after {self.seconds:.1f} s."


@dataclass
class Environment:
    """The environment a report states. `frameworks`: distribution -> version; `facts`: backend -> the host facts
    its worker read live from the framework; `selector`: the known issue's host selector; `applies`: whether it
    matches here (None: no entry, or facts not read)."""

    date: str
    convdiff: str
    python: str
    frameworks: dict[str, str]
    cpu: Mapping[str, Any]
    settings: Mapping[str, str]
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    selector: dict[str, Any] = field(default_factory=dict)
    applies: str = ""


@dataclass
class Report:
    """Everything a report shows; `sections` keyed by REPORT_SECTIONS (absent ones are left out)."""

    id: str
    title: str
    project: str
    tracker_url: str
    upstream: str
    comment_for: str
    env: Environment
    script: str
    script_name: str
    run: ScriptRun
    sections: dict[str, str]
    entry_id: str = ""         # the known issue's id ('' for a script of cases/upstream/ with no entry)
    source: str = ""           # how the script came about: a hand-written reproducer, or a generated one
    expected_vs_actual: str = ""


def fmt(value: Any) -> str:
    """A selector or fact value as YAML writes it (true, [a, b], {lacks: x})."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    return str(value)


def environment_lines(env: Environment) -> list[str]:
    cpu = env.cpu
    lines = [f"- Date: {env.date}",
             f"- Versions: {', '.join(f'{k} {v}' for k, v in env.frameworks.items()) or 'none recorded'}; Python {env.python}",
             f"- CPU: {cpu.get('cpu_model', '?')} ({cpu.get('machine', '?')}, {cpu.get('cores', '?')} logical CPUs); "
             f"ISA flags: {' '.join(cpu.get('cpu_flags', [])) or 'none of the kernel-selecting ones'}",
             f"- Environment settings that select kernels: "
             f"{', '.join(f'{k}={v}' for k, v in env.settings.items()) or 'none set'}"]
    if env.selector:
        lines.append(f"- Shows where: {', '.join(f'{k}: {fmt(v)}' for k, v in env.selector.items())}")
    for backend, facts in env.facts.items():
        shown = ", ".join(f"{k}={fmt(v)}" for k, v in facts.items()) or "none reported"
        lines.append(f"- Read live from the framework ({backend}): {shown}")
    if env.applies:
        lines.append(f"- On this host: {env.applies}")
    lines.append(f"- Written by convdiff {env.convdiff} (differential testing of convolutions against a float64 reference)")
    return lines


def clipped(output: str, limit: int = OUTPUT_LIMIT) -> str:
    """The output, or its head and tail around a line saying how much was left out."""
    if len(output) <= limit:
        return output
    head, tail = output[: limit // 2], output[-limit // 2:]
    return f"{head}\n... [{len(output) - limit} characters left out] ...\n{tail}"


def _fence(text: str, lang: str = "") -> list[str]:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return [ticks + lang, text.rstrip("\n"), ticks]


def render(report: Report) -> str:
    """The markdown of one report."""
    lines = [f"# {report.title}", ""]
    if report.comment_for:
        lines += [f"**Comment for {report.comment_for}**: a standalone reproducer and measurements for the "
                  "behaviour that thread describes.", ""]
    if report.id:  # a known issue's report (a single result's, `convdiff repro --issue`, has none of these)
        project = f"{report.project} ({report.tracker_url})" if report.project else "not recorded"
        lines += [f"**Project:** {project}  ", f"**Upstream:** {report.upstream}  "]
        lines += [f"**convdiff known issue:** `{report.entry_id}`" if report.entry_id else
                  f"**convdiff:** `{report.id}` (no known-issue entry: not a property of one case)", ""]
    lines += ["## Environment", "", *environment_lines(report.env), ""]
    lines += ["## Reproducer", ""]
    if report.source:
        lines += [report.source, ""]
    if report.script:
        lines += [f"`{report.script_name}`: NumPy and the framework only. Exit status 1 when the defect shows, "
                  "0 when it does not.", "", *_fence(report.script, "python"), ""]
    lines += ["## Output on this host", "", report.run.verdict(), ""]
    if report.run.output:
        lines += [*_fence(clipped(report.run.output)), ""]
    if report.expected_vs_actual:
        lines += ["## Expected vs actual", "", report.expected_vs_actual, ""]
    for name in REPORT_SECTIONS:
        text = report.sections.get(name)
        if text:
            lines += [f"## {name}", "", text, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
