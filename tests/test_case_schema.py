"""cases/case.schema.json is current, every case file points at it, and it agrees with the loader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from harness.model.case_schema import SCHEMA_FILE, case_file_schema, file_model, schema_comment, schema_text
from harness.model.loader import case_files

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
CASE_FILES = case_files([CASES])


def test_committed_schema_is_current() -> None:
    committed = (CASES / SCHEMA_FILE).read_text()
    assert committed == schema_text(), "cases/case.schema.json is stale: run `convdiff schema > cases/case.schema.json`"


def test_cli_prints_the_schema() -> None:
    out = subprocess.run([sys.executable, "-m", "harness.commands.cli", "schema"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == case_file_schema()


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: str(p.relative_to(CASES)))
def test_case_file_names_the_schema_on_its_first_line(path: Path) -> None:
    assert path.read_text().splitlines()[0] == schema_comment(path, CASES)


def test_schema_comment_paths() -> None:
    assert schema_comment(CASES / "conv2d.yaml", CASES) == "# yaml-language-server: $schema=./case.schema.json"
    assert schema_comment(CASES / "found" / "f.yaml", CASES) == "# yaml-language-server: $schema=../case.schema.json"


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: str(p.relative_to(CASES)))
def test_the_file_model_accepts_every_case_file(path: Path) -> None:
    file_model().model_validate(yaml.safe_load(path.read_text()))


def test_the_schema_carries_the_model_constraints() -> None:
    """Spot checks against harness/model/schema.py's documented fields (an editor shows these)."""
    defs = case_file_schema()["$defs"]
    entry, sweep = defs["CaseEntry"], defs["Sweep"]
    assert entry["required"] == ["id"]  # the rest may come from defaults
    assert "id" not in defs["Defaults"]["properties"] and "id" not in sweep["properties"]
    assert entry["properties"]["id"]["pattern"] == "^[a-z0-9_]+$"
    assert entry["properties"]["dtype"]["enum"] == ["float32", "float64", "float16", "bfloat16", "uint8", "int8"]
    assert entry["properties"]["stride"]["default"] == 1
    padding = entry["properties"]["padding"]["anyOf"]
    assert {"enum": ["same", "valid"], "type": "string"} in padding
    assert sweep["properties"]["kernel_size"]["type"] == "array"
    assert entry["additionalProperties"] is False


@pytest.mark.parametrize("text", [
    "cases:\n  - id: a\n    kernal: 3\n",          # unknown field
    "cases: []\n",                                   # empty list
    "cases:\n  - id: a\n    padding: full\n",        # not a padding form
    "cases:\n  - id: a\n    sweep:\n      id: [b]\n",  # id is not sweepable
    "defaults:\n  id: a\ncases:\n  - id: b\n",        # no id in defaults
])
def test_the_file_model_rejects_what_the_loader_rejects(text: str) -> None:
    with pytest.raises(ValidationError):
        file_model().model_validate(yaml.safe_load(text))
