"""The documentation site builds with --strict, and its generated reference has what it must.

The site is built once, as `make docs` builds it (the mkdocs command line, --strict), into a temporary
directory. Its pages are checked against sources of truth read here independently of docs/refgen: the
entry points in pyproject.toml and the registry for backends, cases/known_issues.yaml read as plain YAML
for the findings catalog, the argparse parsers for the CLI, the committed JSON Schema for the case fields.
The README stays a front door, and no work-diary wording stands in the tracked tree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from html import unescape
from pathlib import Path

import pytest
import yaml

# one xdist process runs the module, so the site is built once: ungrouped, both processes of make test drew
# its tests and each built it (17 CPU-s each, 2026-11-29, 2-core AMD EPYC Zen 4)
pytestmark = pytest.mark.xdist_group("test_docs")
# The site's build is 17.6 s of make test's 488.6 s (2026-12-02, 2-core AMD EPYC Zen 5), on no backend's or command's
# path: the tests that read the built site run in the nightly, and `make docs` builds it the same way (--strict).
SITE = pytest.mark.nightly("builds the whole site with mkdocs --strict; `make docs` is the same build")

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ("torch", "tensorflow", "keras", "paddle", "jax", "jaxlib", "tvm", "onnx", "onnxruntime", "openvino",
              "tflite", "ai_edge_litert", "tf2onnx", "paddle2onnx", "torchao", "torchvision")
# Build with the mkdocs command line, then report which framework modules the process imported.
BUILD = """
import atexit, json, runpy, sys
out, site, frameworks = sys.argv[1], sys.argv[2], set(json.loads(sys.argv[3]))
def report():
    with open(out, "w") as f:
        json.dump(sorted({m.split(".")[0] for m in sys.modules} & frameworks), f)
atexit.register(report)
sys.argv = ["mkdocs", "build", "--strict", "--site-dir", site]
runpy.run_module("mkdocs", run_name="__main__")
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="the dev extra (mkdocs, mkdocs-material) is not installed")
    pytest.importorskip("material", reason="the dev extra (mkdocs, mkdocs-material) is not installed")
    tmp = tmp_path_factory.mktemp("docs")
    imported = tmp / "imported.json"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-c", BUILD, str(imported), str(tmp / "site"), json.dumps(FRAMEWORKS)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    assert json.loads(imported.read_text()) == [], "building the docs imported a framework"
    return tmp / "site"


def page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def ids(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def text_of(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


@SITE
def test_every_backend_has_an_anchor(site: Path) -> None:
    from backends.registry import registered

    own = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["convdiff.backends"]
    html = page(site, "reference/backends")
    missing = sorted(set(own) - ids(html))
    assert not missing, f"backends without an anchor in reference/backends: {missing}"
    assert len(own) >= 30
    plugins = sorted(set(registered()) - ids(html))
    assert not plugins, f"installed plugin backends missing from reference/backends: {plugins}"
    for name, spec in own.items():  # each section names its registration
        assert f"{name} = {spec}" in text_of(html)


@SITE
def test_every_known_issue_has_an_anchor(site: Path) -> None:
    entries = yaml.safe_load((ROOT / "cases" / "known_issues.yaml").read_text())["issues"]
    html = page(site, "reference/findings")
    anchors = ids(html)
    missing = sorted(e["id"] for e in entries if e["id"] not in anchors)
    assert not missing, f"known issues without an anchor in the findings catalog: {missing}"
    text = text_of(html)
    assert f"the {len(entries)} entries of" in text
    for e in entries:  # every snippet that exists is shown under its entries (one per root cause)
        root = e.get("root", e["id"])
        if (ROOT / "cases" / "upstream" / f"{root}.py").exists():
            assert f"cases/upstream/{root}.py" in text, e["id"]


@SITE
def test_cli_reference_lists_every_subcommand_and_option(site: Path) -> None:
    import argparse

    from harness.commands.cli import build_parser

    html = page(site, "reference/cli")
    text = text_of(html)
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert len(sub.choices) >= 10
    for name, subparser in sub.choices.items():
        assert f"convdiff-{name}" in ids(html), f"no section for convdiff {name}"
        for action in subparser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert flag in text, f"convdiff {name} {flag} is not in the CLI reference"
    for flag in ("--convdiff-backends", "--convdiff-device", "--convdiff-tier", "--convdiff-timeout",
                 "--convdiff-gradients", "--convdiff-compiled-smoke", "--convdiff-known-issues", "--convdiff-cases"):
        assert flag in text, f"pytest option {flag} is not in the CLI reference"
    assert "convdiff_cases" in text


@SITE
def test_schema_reference_lists_every_case_field(site: Path) -> None:
    schema = json.loads((ROOT / "cases" / "case.schema.json").read_text())
    html = page(site, "reference/schema")
    for field in schema["$defs"]["CaseEntry"]["properties"]:
        assert f"case-{field}" in ids(html), f"case field {field} has no row in the schema reference"


@SITE
def test_guide_pages_are_built(site: Path) -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            pages.append(node)
        elif isinstance(node, list):
            for n in node:
                walk(n)
        elif isinstance(node, dict):
            for n in node.values():
                walk(n)

    walk(nav)
    for md in pages:
        built = site / ("index.html" if md == "index.md" else md.removesuffix(".md") + "/index.html")
        assert built.exists(), f"{md} was not built"
    assert not (ROOT / "docs" / "reference").exists(), "generated reference pages were written into the tree"


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert "make test" in readme
    headings = re.findall(r"^## (.+)$", readme, re.MULTILINE)
    assert headings == ["Install", "Quick start", "Writing a case", "Testing your own model", "From pytest and in CI",
                        "Adding a backend", "Where the rest lives"]
    for link in re.findall(r"\]\(((?:docs|examples)/[^)#]+)", readme):
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_no_work_diary_wording() -> None:
    """Documentation and comments state dates and hosts, never a diary of who did what when."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ordinals = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]*teenth|twentieth"
    pattern = (rf"\b(({ordinals}|[0-9]+(st|nd|rd|th)) {'session'}|(last|next|previous|earlier) {'session'}"
               rf"|this {'session'}'s code|device {'time'})")
    proc = subprocess.run(["git", "grep", "-nIiE", pattern, "--", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout == "", f"work-diary wording in the tracked tree:\n{proc.stdout}"
