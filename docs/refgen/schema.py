"""reference/schema.md: the case file's fields, read from the JSON Schema `convdiff schema` prints
(harness/model/case_schema.py, generated from the pydantic model the loader validates with)."""

from __future__ import annotations

import json
from typing import Any

from refgen import code_span

HEADER = """# Case file schema

Generated from `convdiff schema` (`harness.model.case_schema.schema_text()`) when this site was built;
the same schema is committed as `cases/case.schema.json`, for editors. The [guide to writing
cases](../guide/cases.md) says what each field means. Beyond what a JSON Schema can say, the loader
checks that a case is a convolution that exists (groups divide the channels, `output_padding` is smaller
than `max(stride, dilation)`, the output is at least 1 long, per-dimension lists match the op's rank)
unless it says `expect: invalid`; a mistake is reported as `path:line: field: problem`, exit status 2.
"""

SECTIONS = {
    "": ("The file", "file"),
    "CaseEntry": ("A case (an entry of `cases`)", "case"),
    "Defaults": ("`defaults`", "defaults"),
    "Sweep": ("`sweep`", "sweep"),
    "QuantModel": ("`quant`", "quant"),
}


def describe(node: dict[str, Any]) -> str:
    """A JSON Schema fragment as a short type: `int >= 1 | list of int >= 1`."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        anchor = SECTIONS.get(name, (name, name.lower()))[1]
        return f"[{anchor}](#{anchor})"
    if "anyOf" in node:
        return " \\| ".join(describe(n) for n in node["anyOf"] if n.get("type") != "null")
    if "enum" in node:
        return " \\| ".join(code_span(v) for v in node["enum"])
    kind = node.get("type")
    if kind == "array":
        of = describe(node.get("items", {}))
        lo, hi = node.get("minItems"), node.get("maxItems")
        if lo is not None and lo == hi:
            return f"list of {lo} ({of})"
        return f"list of {of}" + (f", at least {lo}" if lo and lo > 1 else "")
    if kind == "integer":
        bits = ["int"]
        if "minimum" in node:
            bits.append(f">= {node['minimum']}")
        if "maximum" in node:
            bits.append(f"<= {node['maximum']}")
        return " ".join(bits)
    if kind == "number":
        return "number" + (f" > {node['exclusiveMinimum']}" if "exclusiveMinimum" in node else "")
    if kind == "string":
        return "string" + (f" matching {code_span(node['pattern'])}" if "pattern" in node else "")
    if kind == "boolean":
        return "bool"
    if kind == "object":
        return "mapping"
    return "any"


def fields_table(definition: dict[str, Any], anchor: str) -> str:
    """One row per field; each field has an anchor `<section>-<field>` (e.g. #case-padding)."""
    required = set(definition.get("required", ()))
    rows = ["| field | type | default | required |", "| --- | --- | --- | --- |"]
    for name, node in definition.get("properties", {}).items():
        default = node.get("default")
        shown = "" if default is None else code_span(json.dumps(default))
        note = "yes" if name in required else ""
        rows.append(f'| <a id="{anchor}-{name}"></a>`{name}` | {describe(node)} | {shown} | {note} |')
    return "\n".join(rows)


def render() -> str:
    from harness.model.case_schema import case_file_schema, schema_text

    schema = case_file_schema()
    out = [HEADER]
    defs = {"": schema, **schema.get("$defs", {})}
    for key, (title, anchor) in SECTIONS.items():
        definition = defs.get(key)
        if definition is None:
            continue
        out += ["", f"## {title} {{#{anchor}}}", ""]
        if definition.get("description"):
            out += [definition["description"], ""]
        out.append(fields_table(definition, anchor))
    for key in defs:  # a definition the sections above do not name still gets a table
        if key not in SECTIONS:
            out += ["", f"## {key} {{#{key.lower()}}}", "", fields_table(defs[key], key.lower())]
    out += ["", "## The whole schema {#json}", "", "```json", schema_text().rstrip("\n"), "```"]
    return "\n".join(out) + "\n"
