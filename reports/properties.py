"""DIR/properties.json: what a run's relation records say about each target, and the --require gate.

The table maps target -> relation -> dtype -> a cell:

    {"property": "bitwise" | "within_bound" | "violated" | "unsupported",
     "max_bound_ratio": the largest difference in units of the relation's bound (0 when bitwise),
     "case": "file::case_id" of the record that shows it (the worst one),
     "statuses": {status: records}, "known_issues": [ids explaining violated records],
     "subnormals": {"inputs" | "products" | "outputs": "kept" | "flushed" | "wrong"}   (subnormal only)
     "note": why a cell is unsupported (a run the relation needs that the target cannot express, or failed)}

A cell is `violated` when any record of it is a mismatch, else `within_bound` when any differs within the
bound, else `bitwise` when any passed; `unsupported` when none of its records compared two runs (the reason
in `note`). A requirement `LEVEL:REL[,REL...]` (LEVEL `bitwise` or `within_bound`, REL a relation or `all`)
holds when every cell of those relations, on every target and dtype of the run, is at least LEVEL; a
relation with no cell at all, or an unsupported cell, does not meet it (nothing is green on nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.execution.records import Record
from harness.numerics.relations import RELATIONS

PROPERTIES = ("bitwise", "within_bound", "violated", "unsupported")
LEVEL_OF = {"pass": "bitwise", "within_bound": "within_bound", "mismatch": "violated"}
REQUIRE_LEVELS = ("bitwise", "within_bound")
FACT_ORDER = ("kept", "flushed", "wrong")


class RequirementError(ValueError):
    pass


def relation_of(rec: Record) -> str | None:
    return rec.output.partition(":")[2] if rec.output.startswith("relation:") else None


def properties(records: Iterable[Record], host: dict[str, Any] | None = None) -> dict[str, Any]:
    """The property table of the relation records among `records` (targets: {} when there are none)."""
    cells: dict[str, dict[str, dict[str, list[Record]]]] = {}
    for r in records:
        rel = relation_of(r)
        if rel is not None:
            cells.setdefault(f"{r.backend}-{r.device}", {}).setdefault(rel, {}).setdefault(r.dtype, []).append(r)
    targets = {t: {rel: {d: _cell(recs) for d, recs in sorted(by_dtype.items())}
                   for rel, by_dtype in sorted(rels.items(), key=lambda kv: RELATIONS.index(kv[0]))}
               for t, rels in sorted(cells.items())}
    return {"schema": 1, "host": dict(host or {}), "relations": list(RELATIONS), "targets": targets}


def _cell(recs: list[Record]) -> dict[str, Any]:
    statuses: dict[str, int] = {}
    for r in recs:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    judged = [r for r in recs if r.status in LEVEL_OF]
    level = max((LEVEL_OF[r.status] for r in judged), key=PROPERTIES.index, default="unsupported")
    cell: dict[str, Any] = {"property": level, "max_bound_ratio": None, "case": None, "statuses": statuses}
    if judged:
        worst = max(judged, key=lambda r: (PROPERTIES.index(LEVEL_OF[r.status]), r.bound_ratio or 0.0))
        cell["max_bound_ratio"] = worst.bound_ratio if worst.bound_ratio is not None else (
            None if worst.status == "mismatch" else 0.0)
        cell["case"] = f"{worst.file}::{worst.case_id}"
    else:
        first = recs[0]
        cell["note"] = f"no comparison ran ({', '.join(f'{n} {s}' for s, n in statuses.items())}): {first.message}"[:300]
        cell["case"] = f"{first.file}::{first.case_id}"
    known = sorted({r.known_issue for r in recs if r.known_issue and r.status == "mismatch"})
    if known:
        cell["known_issues"] = known
    facts: dict[str, str] = {}
    for r in recs:
        for k, v in ((r.relation or {}).get("subnormal") or {}).items():
            facts[k] = max(facts.get(k, "kept"), v, key=FACT_ORDER.index) if v in FACT_ORDER else facts.get(k, v)
    if facts:
        cell["subnormals"] = facts
    return cell


def property_host(summary: dict[str, Any]) -> dict[str, Any]:
    """What the table's figures depend on, from the run's fingerprint: when, the CPU and its flags, the
    settings that pick kernels, each target's version and live host facts (thread counts among them)."""
    fp = summary.get("fingerprint") or {}
    host = fp.get("host") or {}
    return {"date": fp.get("date"), "command": fp.get("command"), "cpu": fp.get("cpu"), "cores": host.get("cores"),
            "cpu_flags": host.get("cpu_flags"), "env": fp.get("env"), "versions": fp.get("targets"),
            "host_facts": fp.get("host_facts")}


def write_properties(path: Path, table: dict[str, Any]) -> None:
    path.write_text(json.dumps(table, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def parse_requirements(texts: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """`bitwise:batch,determinism` (repeatable) -> [(level, relations)]."""
    out = []
    for text in texts:
        level, sep, names = text.partition(":")
        if not sep or level not in REQUIRE_LEVELS:
            raise RequirementError(f"--require {text}: expected LEVEL:RELATION[,RELATION...] with LEVEL one of "
                                   f"{', '.join(REQUIRE_LEVELS)}")
        rels = [n.strip() for n in names.split(",") if n.strip()]
        if rels == ["all"]:
            rels = list(RELATIONS)
        unknown = [n for n in rels if n not in RELATIONS]
        if unknown or not rels:
            raise RequirementError(f"--require {text}: unknown relation(s) {', '.join(unknown) or '(none)'} "
                                   f"(known: {', '.join(RELATIONS)}, or all)")
        out.append((level, tuple(rels)))
    return out


def unmet(table: dict[str, Any], requirements: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """One line per requirement not met: which target, relation and dtype, and what was measured."""
    lines = []
    allowed = {"bitwise": ("bitwise",), "within_bound": ("bitwise", "within_bound")}
    for level, rels in requirements:
        for rel in rels:
            seen = False
            for target, by_rel in table.get("targets", {}).items():
                for dtype, cell in by_rel.get(rel, {}).items():
                    seen = True
                    if cell["property"] in allowed[level]:
                        continue
                    ratio = cell.get("max_bound_ratio")
                    size = f", {ratio:.3g} x bound" if isinstance(ratio, float) and cell["property"] != "bitwise" else ""
                    why = f" ({cell['note']})" if cell.get("note") else f" ({cell['case']}{size})"
                    lines.append(f"requirement {level}:{rel} not met: {target} {dtype} is {cell['property']}{why}")
            if not seen:
                lines.append(f"requirement {level}:{rel} not met: no result of relation {rel} in this run")
    return lines
