"""What `convdiff scope` writes: DIR/scope.yaml (a known-issues file, one entry per group) and DIR/scope.md.

An entry's `cases` selector is the group's rule as a `when` expression; where the rule is one conjunction,
its atoms that name an op or a dtype become the value selectors `op:` and `dtype:` (the rest stays in
`when`). Its `status` lists the failing statuses the rule's cases showed, and `pass` for a rule not
confirmed inside which cases passed too (a failure that depends on the data). Entries are ordered narrowest
first (fewest of the run's cases selected), since the first entry that matches a result explains it.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.commands.scope.infer import Group
from harness.judge.rules import Rule

VALUE_ATOM = re.compile(r"^(op|dtype) == '([a-z0-9_]+)'$")


def entry_id(backend: str, key: str, n: int) -> str:
    """`scope-<backend>-<status>[-<diagnosis>]`, or `<known id>-scope` for a known issue's group."""
    if key.startswith("known:"):
        return f"{key.removeprefix('known:')}-scope"
    status, _, diagnosis = key.partition(":")
    name = "-".join(p for p in (status, diagnosis if diagnosis != "-" else "") if p).replace("_", "-")
    return re.sub(r"[^a-z0-9-]+", "-", f"scope-{backend}-{name}".lower()).strip("-") + (f"-{n}" if n else "")


def selector(rule: Rule) -> dict[str, Any]:
    """The entry's `cases:` mapping: op/dtype atoms of a single conjunction as value selectors, the rest as `when`."""
    if len(rule.terms) != 1:
        return {"when": rule.text}
    values: dict[str, Any] = {}
    rest = []
    for atom in rule.terms[0]:
        m = VALUE_ATOM.match(atom.text)
        if m and m.group(1) not in values:
            values[m.group(1)] = m.group(2)
        else:
            rest.append(atom)
    if rest:
        values["when"] = Rule((tuple(rest),)).text
    return values


def in_words(g: Group) -> str:
    c = g.fresh
    return (f"fresh cases since the rule last changed: {c.fails_inside} fail inside, {c.passes_inside} pass inside, "
            f"{c.fails_outside} fail outside, {c.passes_outside} pass outside"
            + (f" ({c.other} of other groups)" if c.other else ""))


def scope_entries(backend: str, device: str, groups: Sequence[Group],
                  selected: dict[str, int]) -> list[tuple[Group, dict[str, Any]]]:
    """(group, its known-issues entry) for each group with a rule, narrowest first (`selected`: how many of the
    run's cases each group's rule selects)."""
    date = datetime.date.today().isoformat()
    out = []
    ids: set[str] = set()
    for g in sorted((g for g in groups if g.rule and g.rule.terms), key=lambda g: (selected.get(g.key, 0), g.key)):
        n, ident = 0, entry_id(backend, g.key, 0)
        while ident in ids:
            n += 1
            ident = entry_id(backend, g.key, n)
        ids.add(ident)
        confirmed = "confirmed" if g.confirmed else "NOT confirmed (the budget ended first)"
        statuses = set(g.statuses)
        if not g.confirmed and (g.fresh.passes_inside or (g.fit and g.fit.fp)):
            statuses.add("pass")  # cases inside it passed too: it fails there only sometimes (data, rounding)
        out.append((g, {
            "id": ident, "backend": backend, "device": device, "cases": selector(g.rule),
            "status": sorted(statuses) if len(statuses) > 1 else next(iter(statuses)),
            "reason": f"Inferred by convdiff scope on {date}: {g.rule.words}. {confirmed}; {in_words(g)}.",
            "link": "none: inferred by convdiff scope (to be reported upstream)",
        }))
    return out


def yaml_text(entries: Sequence[dict[str, Any]], backend: str) -> str:
    """A known-issues file, written by hand so that every `when` stays one line (JSON strings are YAML)."""
    lines = [f"# convdiff scope --backends {backend}: one entry per group of failures, its rule tested on fresh",
             "# cases (scope.md has the counts). Pass this file to --known-issues.", "issues:"]
    for e in entries:
        lines.append(f"  - id: {e['id']}")
        lines.append(f"    backend: {json.dumps(e['backend'])}")
        lines.append(f"    device: {e['device']}")
        lines.append("    cases:")
        for k, v in e["cases"].items():
            lines.append(f"      {k}: {json.dumps(v)}")
        lines.append(f"    status: {json.dumps(e['status'])}")
        lines.append(f"    reason: {json.dumps(e['reason'])}")
        lines.append(f"    link: {json.dumps(e['link'])}")
    return "\n".join(lines) + "\n"


def markdown(backend: str, groups: Sequence[Group], entries: Sequence[tuple[Group, dict[str, Any]]], rounds: int,
             results: int, seconds: float) -> str:
    """scope.md: each rule in words, its `when`, its counts on the fresh cases."""
    by_key = {g.key: e for g, e in entries}
    lines = [f"# Scope of {backend}'s failures", "",
             f"{results} results in {seconds:.0f} s, {rounds} round(s) of fresh cases. A rule is confirmed when, since it "
             "last changed, every fresh case agreed with it (the group's failure inside, none outside).", ""]
    for g in groups:
        e = by_key.get(g.key)
        lines += [f"## {g.key}", ""]
        if e is None:
            lines += ["No rule: nothing separates these failures from the passes with the features convdiff knows.", ""]
            continue
        c = g.fresh
        lines += [f"Fails exactly when: {g.rule.words}." if g.confirmed else f"Fails when (not confirmed): {g.rule.words}.",
                  "", f"    when: {g.rule.text}", "",
                  "| fresh cases | inside | outside |", "| --- | --- | --- |",
                  f"| fail ({g.key}) | {c.fails_inside} | {c.fails_outside} |",
                  f"| pass | {c.passes_inside} | {c.passes_outside} |", ""]
        if c.other:
            lines += [f"{c.other} fresh case(s) failed in another group's way.", ""]
        lines += [f"Entry `{e['id']}` in scope.yaml; the rule changed {g.changes} time(s) while tested.", ""]
    return "\n".join(lines)


def write_scope(out: Path, backend: str, device: str, groups: Sequence[Group], selected: dict[str, int],
                rounds: int, results: int, seconds: float) -> tuple[Path, Path]:
    entries = scope_entries(backend, device, groups, selected)
    yml, md = out / "scope.yaml", out / "scope.md"
    yml.write_text(yaml_text([e for _, e in entries], backend), encoding="utf-8")
    md.write_text(markdown(backend, groups, entries, rounds, results, seconds), encoding="utf-8")
    return yml, md
