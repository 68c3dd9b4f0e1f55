"""The package import graph of harness/, backends/ and reports/ has no cycle, and follows the stages.

Built from the source with `ast` (nothing is imported). The graph holds the imports a module
makes when it is loaded: statements at module level (inside `if`/`try` blocks too), not those
inside a function body (the layering check below reads those too). A circle of load-time imports makes the result depend on which module
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


# The stages, bottom first: a module may import its own stage and those before it, never a later one.
STAGES = ("harness.model", "harness.numerics", "backends", "harness.execution", "harness.judge", "reports",
          "harness.commands", "harness")  # the last: harness/'s own entry-point shims (python -m harness.worker)


def stage(mod: str) -> int:
    """The index in STAGES of the longest prefix that names `mod`'s stage."""
    return max((i for i, s in enumerate(STAGES) if mod == s or mod.startswith(s + ".")),
               key=lambda i: len(STAGES[i]))


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def our_modules(root: Path = ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}


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


def imports_of(mod: str, path: Path, known: set[str], load_time: bool = True) -> set[str]:
    """The modules of ours that `mod` imports when loaded (or anywhere, function bodies included)."""
    out: set[str] = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in _load_time(tree) if load_time else ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(mod, path.name == "__init__.py", node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else base)
    return {m for m in out if m in known and m != mod}


def import_graph(root: Path = ROOT, load_time: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports."""
    modules = our_modules(root)
    return {mod: imports_of(mod, path, set(modules), load_time) for mod, path in modules.items()}


def layering_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a later stage, as `importer -> imported`. A package's `__init__` docstring
    module counts as its stage; the root `harness` package itself imports nothing."""
    return sorted(f"{mod} -> {dep}" for mod, deps in graph.items() for dep in deps
                  if dep != "harness" and stage(dep) > stage(mod))


def test_resolution_of_relative_imports() -> None:
    """Hand-checked edges: the resolver must see them, or an empty graph would pass trivially."""
    graph = import_graph()
    assert "reports.repro.registry" in graph["reports.repro.tvm"]  # `from reports.repro.registry import ...`
    assert "harness.execution.pool" in graph["harness.execution.runner"]
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


def test_stage_of_a_module() -> None:
    assert STAGES[stage("harness.model.case")] == "harness.model"
    assert STAGES[stage("harness.commands.fuzz.gen")] == "harness.commands"
    assert STAGES[stage("backends.tvm.cache")] == "backends"
    assert STAGES[stage("harness.worker")] == "harness"


def test_layering_catches_a_core_module_importing_a_command(tmp_path: Path) -> None:
    """A tree made here, with one deliberate wrong-way import (inside a function: those count too)."""
    files = {
        "harness/__init__.py": "",
        "harness/model/__init__.py": "",
        "harness/model/case.py": "def f():\n    from harness.commands.cli import main\n    return main\n",
        "harness/numerics/__init__.py": "",
        "harness/numerics/oracle.py": "from harness.model.case import f\n",
        "harness/commands/__init__.py": "",
        "harness/commands/cli.py": "from harness.numerics.oracle import f\nmain = f\n",
        "backends/__init__.py": "",
        "reports/__init__.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert layering_violations(import_graph(tmp_path, load_time=False)) == [
        "harness.model.case -> harness.commands.cli"]
    assert layering_violations(import_graph(tmp_path, load_time=True)) == []  # a function-local import


def test_every_module_imports_only_earlier_stages() -> None:
    """The tree itself: function-local imports included (a lazy import is still a dependency)."""
    graph = import_graph(load_time=False)
    assert "harness.numerics.oracle" in graph["harness.judge.diagnosis"]  # the scan sees real edges
    assert layering_violations(graph) == []
