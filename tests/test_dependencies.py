"""`make lint`'s dependency check (deptry, configured in pyproject.toml): every import is declared.

The base install must start with what `dependencies` declares (a report-only install imported SciPy, which
nothing declared, and died at `convdiff --help`); a framework belongs to its extra. The check fails on an
import no dependency declares, and passes on the tree as it is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPTRY = Path(sys.executable).with_name("deptry")
pytestmark = pytest.mark.skipif(not DEPTRY.exists(), reason="deptry is not installed (the dev extra)")


def deptry(where: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(DEPTRY), "--no-ansi", "."], cwd=where, capture_output=True, text=True, timeout=120)


def test_the_tree_declares_what_it_imports() -> None:
    result = deptry(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_undeclared_import_fails_the_lint(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    pkg = tmp_path / "harness"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    # scipy is in the venv (a framework pulls it in) but convdiff declares it nowhere: what broke the base install
    (pkg / "planted.py").write_text("import numpy\nimport yaml\nfrom scipy.special import erf\n")
    result = deptry(tmp_path)
    assert result.returncode != 0
    assert "scipy" in result.stdout + result.stderr
