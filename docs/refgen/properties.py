"""reference/properties.md: the measured property table of each committed properties file (docs/properties/*.json,
written by `convdiff run --relations all`: reports/properties.py), newest first: per target, relation and dtype,
bitwise / within bound / violated / unsupported, the largest difference in units of the bound, the case that
shows it, and the known issue that explains a violation; then what each target does with subnormal numbers."""

from __future__ import annotations

import json
from typing import Any

from refgen import ROOT, cell, code_span

FILES = ROOT / "docs" / "properties"
SHORT = {"bitwise": "bitwise", "within_bound": "within", "violated": "**violated**", "unsupported": "unsupported"}


def _cell(c: dict[str, Any]) -> str:
    prop = c["property"]
    out = SHORT[prop]
    ratio = c.get("max_bound_ratio")
    if prop in ("within_bound", "violated") and isinstance(ratio, int | float):
        out += f" {ratio:.2g}"
    known = c.get("known_issues") or []
    if known:
        out += " (" + ", ".join(f"[{k}](findings.md#{k})" for k in known) + ")"
    return out


def _table(table: dict[str, Any]) -> list[str]:
    rels = table.get("relations") or []
    lines = ["| target | dtype | " + " | ".join(rels) + " |", "| --- | --- |" + " --- |" * len(rels)]
    for target, by_rel in table["targets"].items():
        dtypes = sorted({d for cells in by_rel.values() for d in cells})
        for d in dtypes:
            row = [_cell(by_rel[r][d]) if d in by_rel.get(r, {}) else "" for r in rels]
            lines.append(f"| {code_span(target)} | {d} | " + " | ".join(row) + " |")
    return lines


def _subnormals(table: dict[str, Any]) -> list[str]:
    lines = ["| target | dtype | inputs | products | outputs |", "| --- | --- | --- | --- | --- |"]
    for target, by_rel in table["targets"].items():
        for d, c in by_rel.get("subnormal", {}).items():
            s = c.get("subnormals") or {}
            lines.append(f"| {code_span(target)} | {d} | " + " | ".join(s.get(k, "") for k in ("inputs", "products", "outputs"))
                         + " |")
    return lines


def _violations(table: dict[str, Any]) -> list[str]:
    lines = []
    for target, by_rel in table["targets"].items():
        for rel, cells in by_rel.items():
            for d, c in cells.items():
                if c["property"] == "violated":
                    known = ", ".join(f"[{k}](findings.md#{k})" for k in c.get("known_issues") or []) or "none"
                    lines.append(f"- {code_span(target)} {rel} {d}: {cell(c.get('case') or '')}; known issue: {known}")
    return lines


def render() -> str:
    files = sorted(FILES.glob("*.json"), reverse=True) if FILES.is_dir() else []
    out = ["# Properties: each target against itself", "",
           "Generated from the property files in `docs/properties/` (each written by `convdiff run --relations all`, "
           "as `properties.json`). A relation runs a case again in another form whose result is known from the "
           "first: the same input again and in a second process (determinism), inside a batch of 3 or 7 "
           "(batch), on another thread count (threads), in the other layout (layout), scaled by a power of two "
           "(scaling), through the transposed convolution's adjoint identity (adjoint), and with subnormal "
           "inputs, products and outputs (subnormal). See [Reading results](../guide/results.md#relations).", "",
           "**bitwise**: the same bits; **within** r: not the same bits, the largest difference r times the "
           "rounding bound derived for the two computations; **violated** r: beyond it; **unsupported**: a run "
           "the relation needs is one the target cannot express (or gave no output).", ""]
    if not files:
        return "\n".join([*out, "No property file is committed yet."]) + "\n"
    for f in files:
        table = json.loads(f.read_text(encoding="utf-8"))
        host = table.get("host") or {}
        flags = ", ".join(host.get("cpu_flags") or [])
        out += [f"## {f.stem}", "",
                f"Measured {host.get('date') or '(undated)'} on {host.get('cpu') or 'an unrecorded CPU'}, "
                f"{host.get('cores') or '?'} cores ({flags or 'flags not recorded'}); settings "
                f"{code_span(json.dumps(host.get('env') or {}))}; command {code_span(host.get('command') or 'convdiff run --relations all')}.",
                "", *_table(table), "", "### Subnormal numbers", "",
                "What each target does with subnormal inputs, products and outputs, measured by the targeted "
                "probes (small integers times powers of two: exact where subnormals are kept).", "",
                *_subnormals(table), ""]
        violated = _violations(table)
        if violated:
            out += ["### Violations and what explains them", "", *violated, ""]
    return "\n".join(out) + "\n"
