"""reference/backends.md: every registered backend, read from the `convdiff.backends` registry and each
adapter class (its Capabilities, epilogue ops, quantized path, whether it builds per case, its docstring).
Adapter modules only are imported; an adapter imports its framework in its worker, never at import."""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import fields

from refgen import ROOT, cell, code_span, text

HEADER = """# Backends

Every backend registered under the `convdiff.backends` entry point group when this site was built,
convdiff's own and any installed plugin's, read from the registry (`backends/registry.py`) and from each
adapter class. `convdiff backends` lists the same names with what is installed on your machine;
`convdiff backends --capabilities` prints the table at the end of this page, and `convdiff backends
--probe` measures it. The [targets guide](../guide/targets.md) describes the families and the rules every
adapter follows; [Write an adapter](../guide/adapters.md) says how to add one.
"""

# backends/<family>/ -> the family's heading; a plugin's adapter lives outside backends/
FAMILIES = {
    "torch": "PyTorch",
    "tensorflow": "TensorFlow and Keras",
    "litert": "LiteRT (TensorFlow Lite)",
    "paddle": "PaddlePaddle",
    "jax": "JAX",
    "tvm": "Apache TVM",
    "onnx": "ONNX Runtime, OpenVINO and the ONNX converters",
}
PLUGINS = "Installed plugins"


def family(spec: str) -> str:
    parts = spec.partition(":")[0].split(".")
    if parts[0] == "backends" and len(parts) > 2:
        return FAMILIES.get(parts[1], parts[1])
    return PLUGINS


def pins() -> dict[str, str]:
    """distribution -> version pinned in constraints.txt (what `make setup` installs)."""
    found = {}
    path = ROOT / "constraints.txt"
    for line in path.read_text().splitlines() if path.exists() else ():
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)==([^\s;#]+).*", line)
        if m:
            found[m.group(1).lower().replace("_", "-")] = m.group(2)
    return found


def docstring(cls: type) -> str:
    """The class's own docstring, else its module's first paragraph (never the base class's)."""
    own = cls.__dict__.get("__doc__")
    if own:
        return inspect.cleandoc(own)
    module = sys.modules.get(cls.__module__)
    doc = inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""
    return doc.split("\n\n")[0]


def backend_section(name: str, reg: object, pinned: dict[str, str]) -> list[str]:
    from harness.commands.probe.capabilities import epilogue_cell

    cls = reg.load()  # type: ignore[attr-defined]
    adapter = cls()
    dist = (adapter.distribution or adapter.framework).lower().replace("_", "-")
    source = reg.source + (f" {reg.source_version}" if reg.source_version else "")  # type: ignore[attr-defined]
    rows = [
        ("registered as", f"{code_span(f'{name} = {reg.spec}')} by {text(source)}"),  # type: ignore[attr-defined]
        ("framework", code_span(adapter.framework) + (f" (pinned: {code_span(dist + '==' + pinned[dist])})"
                                                      if dist in pinned else "")),
        ("builds per case", "yes: export, conversion or compile per case (cached; `--compiled-sample` applies)"
         if adapter.builds_per_case else "no: the framework is called directly"),
        ("batched builds", f"{adapter.batch_size} cases at a time" if adapter.batch_size else "no"),
        ("quantized (uint8/int8)", cell(adapter.quantized) if adapter.quantized else "no: such cases are `unsupported`"),
        ("epilogue ops", cell(epilogue_cell(adapter)) + (f" ({', '.join(adapter.epilogue_ops)})"
                                                          if adapter.epilogue_ops and epilogue_cell(adapter) != "all"
                                                          else "")),
    ]
    caps = adapter.capabilities
    for f in fields(caps):
        value = getattr(caps, f.name)
        shown = ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)
        rows.append((f.name.replace("_", " "), cell(shown or "-")))
    out = ["", f"### {name} {{#{name}}}", ""]
    doc = docstring(cls)
    if doc:
        out += [text(doc), ""]
    out += ["| property | value |", "| --- | --- |"] + [f"| {k} | {v} |" for k, v in rows]
    return out


def test_only() -> list[str]:
    from backends.testing.fault import FAULT_MODES
    from backends.testing.mutants import MUTANTS

    return ["", "## Test-only backends {#test-only}", "",
            "Never run unless named; `--backends` takes them like any other.", "",
            "* `fault:<mode>`: a backend that fails on purpose, to test the harness's isolation: "
            + ", ".join(code_span(m) for m in FAULT_MODES) + ".",
            "* `mutant:<bug>`: PyTorch with one historical bug class put back (`convdiff selftest` runs them all): "
            + ", ".join(code_span(m) for m in MUTANTS) + "."]


def render() -> str:
    from backends.registry import registered
    from harness.commands.probe.capabilities import capability_table

    regs = registered()
    pinned = pins()
    groups: dict[str, list[str]] = {}
    for name, reg in regs.items():
        groups.setdefault(family(reg.spec), []).append(name)
    order = [*(f for f in FAMILIES.values() if f in groups), *sorted(g for g in groups if g not in FAMILIES.values())]
    out = [HEADER, f"{len(regs)} backends in {len(order)} families:", "",
           "| family | backends |", "| --- | --- |"]
    for g in order:
        out.append(f"| {g} | " + ", ".join(f"[{n}](#{n})" for n in groups[g]) + " |")
    for g in order:
        slug = re.sub(r"[^a-z0-9]+", "-", g.lower()).strip("-")
        out += ["", f"## {g} {{#family-{slug}}}"]
        for name in groups[g]:
            out += backend_section(name, regs[name], pinned)
    out += test_only()
    out += ["", "## Capability table {#capabilities}", "",
            "What `convdiff backends --capabilities` prints: each adapter's declaration, one row per backend.", "",
            capability_table(list(regs)).replace("*", "\\*")]  # N*C, NC*: text, not emphasis
    return "\n".join(out) + "\n"
