"""The package import graph of harness/, backends/ and reports/ has no cycle.

Built from the source with `ast` (nothing is imported). The graph holds the imports a module
makes when it is loaded: statements at module level (inside `if`/`try` blocks too), not those
inside a function body. A circle of load-time imports makes the result depend on which module
is imported first (a partially initialised module); a function-local import runs only once both
modules are loaded, the usual way for an adapter to reach an optional part (its gradients).
Relative imports are resolved against the importing module; `from pkg import name` is an edge to
`pkg.name` when that is a module of ours, else to `pkg` itself. The implicit import of a parent
package's `__init__` is not an edge: it is how Python loads a submodule, not a dependency.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "backends", "reports")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def our_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _base(mod: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (level 0: as written; level n: n-1 packages up from ours)."""
    if node.level == 0:
        return node.module or ""
    package = mod.split(".") if is_package else mod.split(".")[:-1]
    if node.level > 1:
        package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _load_time(tree: ast.AST) -> list[ast.AST]:
    """Every node outside function bodies (class bodies run at load time, so they count)."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.FunctionDef | ast.AsyncFunctionDef))
    return found


def imports_of(mod: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ours that `mod` imports anywhere in its body."""
    out: set[str] = set()
    for node in _load_time(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(mod, path.name == "__init__.py", node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else base)
    return {m for m in out if m in known and m != mod}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports."""
    modules = our_modules()
    return {mod: imports_of(mod, path, set(modules)) for mod, path in modules.items()}


def test_resolution_of_relative_imports() -> None:
    """Hand-checked edges: the resolver must see them, or an empty graph would pass trivially."""
    graph = import_graph()
    assert "reports.repro_registry" in graph["reports.repro_tvm"]  # `from .repro_registry import ...`
    assert "harness.pool" in graph["harness.runner"]
    assert "reports.html" not in graph["reports"]  # imported inside write_reports(): not at load time
    assert sum(map(len, graph.values())) > 50


def test_cycle_detection_sees_a_cycle() -> None:
    with pytest.raises(CycleError):
        TopologicalSorter({"a": {"b"}, "b": {"c"}, "c": {"a"}}).prepare()


def test_no_import_cycles() -> None:
    try:
        TopologicalSorter(import_graph()).prepare()
    except CycleError as exc:
        pytest.fail("import cycle: " + " -> ".join(exc.args[1]))
