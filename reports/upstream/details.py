"""The report's collapsed part: the full checks' output, the scope, and every implementation's record on the
witness case (those that cannot express it included). Evidence for whoever wants more than the body."""

from __future__ import annotations

from reports.upstream.model import Report, ScriptRun

OUTPUT_LIMIT = 12_000


def _fence(text: str, lang: str = "") -> list[str]:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return [ticks + lang, text.rstrip("\n"), ticks]


def _clipped(output: str) -> str:
    if len(output) <= OUTPUT_LIMIT:
        return output
    half = OUTPUT_LIMIT // 2
    return f"{output[:half]}\n... [{len(output) - OUTPUT_LIMIT} characters left out] ...\n{output[-half:]}"


def _check(name: str, run: ScriptRun) -> list[str]:
    return [f"`{name}`: {run.verdict()}", "", *_fence(_clipped(run.output) or "(no output)", "text"), ""]


def _records(report: Report) -> list[str]:
    others = report.others
    if others is None or not others.records:
        return []
    rows = ["| implementation | status | max abs error | message |", "| --- | --- | --- | --- |"]
    for r in others.records:
        err = "" if r.get("max_abs_err") is None else f"{r['max_abs_err']:.3g}"
        message = " ".join(str(r.get("message") or "").split())[:160].replace("|", "/")
        rows.append(f"| {r.get('label', r.get('backend'))} | {r.get('status')} | {err} | {message} |")
    settings = "".join(f", {k}={v}" for k, v in others.settings.items())
    return [f"Every implementation on the same convolution ({others.case}{settings}):", "", *rows, ""]


def details(report: Report) -> list[str]:
    parts: list[str] = []
    for name, run in report.checks:
        parts += _check(name, run)
    if report.scope:  # "It fails exactly when ...": a rule tested on fresh cases, with its counts
        parts += [" ".join(report.scope), ""]
    parts += _records(report)
    if report.components:
        parts += ["Where it lives in the vendored component: " + "; ".join(report.components) + ".", ""]
    if report.latest:
        parts += [f"Newest release checked: {report.latest}.", ""]
    if report.searched:
        parts += ["Searched for duplicates:", "", *[f"- {s}" for s in report.searched], ""]
    if report.legacy:
        parts += ["The snippet above is the full check of an older report shape; a minimal snippet is to come.", ""]
    if not parts:
        return []
    return ["<details><summary>Full check</summary>", "", *parts, "</details>", ""]
