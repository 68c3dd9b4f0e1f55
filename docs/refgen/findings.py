"""reference/findings.md: the findings catalog. One anchor per entry of convdiff's own known_issues.yaml
(id, targets, status, hosts, reason, upstream state, reproducer, upstream report, and the corpus cases its
selector matches on any host), grouped by framework, with counts: what convdiff knows is wrong where."""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from refgen import ROOT, code_span, indent, text
from refgen.backends import FAMILIES, family

OTHER = "Other targets"
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
_HEADING = re.compile(r"^(#{1,6})(\s)", re.MULTILINE)


def plain(value: Any) -> Any:
    """A selector as plain YAML data (mappings, lists, scalars)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def flow(value: Any) -> str:
    return yaml.safe_dump(plain(value), default_flow_style=True, width=10**6, sort_keys=False).strip()


def targets(entry: Any, names: list[str]) -> list[str]:
    """The registered backends an entry's backend names and globs select, in registry order."""
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in entry.backend)]


def corpus_matches(entry: Any, names: list[str], cases: list[tuple[Any, dict]]) -> list[Any]:
    """The corpus cases the entry's selector matches on any host and output. Apart from its backend and
    device lists, a match does not depend on the target, so one backend and device it names stand for all."""
    chosen = targets(entry, names) or list(entry.backend)
    device = (entry.device or ["cpu"])[0]
    return [c for c, p in cases if entry.matches(c, chosen[0], device, None, None, p)]


def upstream(entry: Any) -> str:
    state = entry.upstream_state
    line = f"**{state}**: {text(entry.link)}"
    extra = []
    if entry.tracker:
        extra.append(f"tracker {code_span(entry.tracker)}")
    if entry.checked:
        extra.append("checked " + ", ".join(f"{k} {v}" for k, v in entry.checked.items()))
    return line + (f" ({'; '.join(extra)})" if extra else "")


def report_markdown(path: Path) -> str:
    """An upstream report shown inside the catalog: its headings moved below the entry's, and links to
    files beside it (which the site does not hold) kept as text."""
    def link(m: re.Match[str]) -> str:
        target = m.group(3)
        if m.group(1) or not re.match(r"https?://", target):
            return f"{m.group(2)} ({code_span(target)})"
        return m.group(0)

    out, fence, folded = [], "", False
    for line in path.read_text().splitlines():
        summary = re.fullmatch(r"<details><summary>(.*)</summary>", line.strip())
        if summary and not fence:  # the report's collapsed details: a collapsed block of the site
            out.append(f'??? info "{summary.group(1)}"')
            folded = True
            continue
        if line.strip() == "</details>" and not fence:
            folded = False
            continue
        line = f"    {line}" if folded and line else line
        marker = re.match(r"\s*(```+|~~~+)", line)
        if marker and (not fence or marker.group(1).startswith(fence)):
            fence = "" if fence else marker.group(1)
        elif not fence:  # prose: headings below the entry's, links kept to the web
            line = _LINK.sub(link, _HEADING.sub(lambda m: "#" * min(6, len(m.group(1)) + 3) + m.group(2), line))
        out.append(line)
    return "\n".join(out)


def entry_section(entry: Any, names: list[str], shown: list[Any], holder: str | None = None) -> list[str]:
    """`holder`: the entry whose section shows the reproducer and upstream report of this entry's root cause
    (None: this one's)."""
    chosen = targets(entry, names)
    backends = ", ".join(code_span(b) for b in entry.backend)
    if chosen and [*chosen] != list(entry.backend):
        backends += " (" + ", ".join(f"[{n}](backends.md#{n})" for n in chosen) + ")"
    elif chosen:
        backends = ", ".join(f"[`{n}`](backends.md#{n})" for n in chosen)
    selector = {k: v for k, v in entry.cases.items() if k != "when"}
    rows = [
        ("targets", backends + (f" on {', '.join(entry.device)}" if entry.device else " on any device")),
        ("status", ", ".join(code_span(s) for s in entry.status)),
        ("hosts", code_span(flow(entry.host)) if entry.host else "any"),
        ("cases", code_span(flow(selector)) if selector else "every case"),
        ("upstream", upstream(entry)),
    ]
    if "when" in entry.cases:
        rows.insert(4, ("when", code_span(" ".join(str(entry.cases["when"]).split()))))
    if entry.max_rel_err is not None:
        rows.insert(4, ("explains", f"mismatches up to rel_err {entry.max_rel_err:g}"))
    if entry.fixed_in:
        rows.append(("fixed in", text(entry.fixed_in)))
    out = ["", f"### {entry.id} {{#{entry.id}}}", "", "| field | value |", "| --- | --- |"]
    out += [f"| {k} | {v.replace('|', chr(92) + '|')} |" for k, v in rows]
    out += ["", text(" ".join(entry.reason.split())), ""]
    script, report = (ROOT / "cases" / "upstream" / f"{entry.root}{ext}" for ext in (".py", ".md"))  # per root cause
    if holder is not None:
        if script.exists() or report.exists():
            out += [f"Reproducer (`cases/upstream/{entry.root}.py`) and upstream report: under "
                    f"[{holder}](#{holder}), the same root cause.", ""]
    else:
        if script.exists():
            out += [f'??? example "Reproducer: `cases/upstream/{entry.root}.py`"', "",
                    indent("```python\n" + script.read_text().rstrip("\n") + "\n```"), ""]
        if report.exists():
            out += [f'??? note "Upstream report: `cases/upstream/{entry.root}.md`"', "",
                    indent(report_markdown(report)), ""]
    if shown:
        by_file: dict[str, list[str]] = {}
        for c in shown:
            by_file.setdefault(_rel(c.file), []).append(c.id)
        listing = "\n".join(f"* `{f}`: " + ", ".join(compact(ids)) for f, ids in by_file.items())
        out += [f'??? info "{len(shown)} case{"s" if len(shown) != 1 else ""} of the corpus '
                f'(in {len(by_file)} file{"s" if len(by_file) != 1 else ""})"', "", indent(listing), ""]
    else:
        out += ["No case of the corpus matches this entry (a stale entry: `convdiff run` warns about it).", ""]
    return out


def compact(ids: list[str]) -> list[str]:
    """Case ids as shown: the members of one sweep folded into `base[...]` with their count."""
    sweeps: dict[str, list[str]] = {}
    for i in ids:
        sweeps.setdefault(i.split("[", 1)[0], []).append(i)
    return [code_span(members[0]) if len(members) == 1 else f"{code_span(base + '[...]')} ({len(members)} of its sweep)"
            for base, members in sweeps.items()]


def _rel(path: str) -> str:
    p = Path(path).resolve()
    return str(p.relative_to(ROOT / "cases")) if p.is_relative_to(ROOT / "cases") else str(path)


def _slug(label: str) -> str:
    return "group-" + re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def render() -> str:
    from backends.registry import registered
    from harness.judge.known_issues import load_known_issues, project_known_issues
    from harness.model.loader import load_cases

    path = project_known_issues()
    entries = load_known_issues(path).entries if path is not None else []
    regs = registered()
    names = list(regs)
    cases = [(c, c.params()) for c in load_cases([ROOT / "cases"])]
    groups: dict[str, list[tuple[Any, list[Any]]]] = {}
    for e in entries:
        chosen = targets(e, names)
        label = family(regs[chosen[0]].spec) if chosen else OTHER
        groups.setdefault(label, []).append((e, corpus_matches(e, names, cases)))
    order = [*(f for f in FAMILIES.values() if f in groups), *sorted(g for g in groups if g not in FAMILIES.values())]
    states = Counter(e.upstream_state.split(" ")[0] for e in entries)
    out = ["# Findings catalog", "",
           f"Every divergence convdiff knows of: the {len(entries)} entries of `cases/known_issues.yaml` when this "
           "site was built, grouped by the framework family of the targets they name. Each entry says which "
           "targets and hosts it concerns, what status it predicts, why, what upstream knows (a report, none "
           "found, or the release that fixes it), its standalone reproducer and upstream report where they exist (once "
           "per root cause: under the entry named after it, or its first entry; the others link there), and which cases "
           "of the corpus its selector matches on any host (run them with `convdiff run FILE --backends NAME`). "
           "The [known issues guide](../guide/known-issues.md) says how entries are matched and how to add one.",
           "", f"Upstream: {states.get('reported', 0)} reported, {states.get('none', 0)} with no report found, "
           f"{states.get('fixed', 0)} fixed in a release.", "",
           "| framework | entries | reported | none found | fixed | with a reproducer | corpus cases |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for g in order:
        items = groups[g]
        count = Counter(e.upstream_state.split(" ")[0] for e, _ in items)
        repro = sum((ROOT / "cases" / "upstream" / f"{e.id}.py").exists() for e, _ in items)
        ids = {(c.file, c.id) for _, shown in items for c in shown}
        out.append(f"| [{g}](#{_slug(g)}) | {len(items)} | {count.get('reported', 0)} | {count.get('none', 0)} "
                   f"| {count.get('fixed', 0)} | {repro} | {len(ids)} |")
    trackers = Counter(e.tracker for e in entries if e.tracker)
    if trackers:
        out += ["", "By tracker (the repository an upstream report belongs to):", "",
                "| tracker | entries |", "| --- | --- |"]
        out += [f"| `{t}` | {n} |" for t, n in trackers.most_common()]
        if len(entries) > sum(trackers.values()):
            out.append(f"| (not set) | {len(entries) - sum(trackers.values())} |")
    # a root cause's reproducer and report are shown once: under the entry named after the root, else under its
    # first entry on the page (each root's files, up to 60 kB, were repeated under every entry of its root)
    in_order = [e for g in order for e, _ in groups[g]]
    holders: dict[str, str] = {}
    for e in in_order:
        holders.setdefault(e.root, e.root if any(x.id == e.root for x in in_order) else e.id)
    for g in order:
        items = groups[g]
        out += ["", f"## {g} {{#{_slug(g)}}}", "", f"{len(items)} entries: "
                + ", ".join(f"[{e.id}](#{e.id})" for e, _ in items) + "."]
        for e, shown in items:
            out += entry_section(e, names, shown, None if holders[e.root] == e.id else holders[e.root])
    return "\n".join(out) + "\n"
