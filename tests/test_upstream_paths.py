"""Upstream reports' surroundings: the scripts the database's reasons name, and --draft's environment settings."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_script_an_entry_names_exists() -> None:
    """A reason's "Reproducer: cases/upstream/X.py" or "full check: cases/upstream/checks/X.py" is a file: when
    entries are folded under one root their own scripts move to checks/ (or go), and the reason must follow."""
    text = (ROOT / "cases" / "known_issues.yaml").read_text()
    named = sorted(set(re.findall(r"cases/upstream/[\w./-]*\.py", text)))
    assert named, "no script named: the pattern no longer matches the reasons"
    assert [p for p in named if not (ROOT / p).is_file()] == []


def test_draft_settings_skip_host_conditions() -> None:
    """A host selector's condition (`cpu_flags: {has: ...}`) names no environment setting: the draft sets what a
    value selects (TF's oneDNN switch) and the AVX2 cap a `lacks: avx512f` condition asks for, and nothing else."""
    from harness.model.yamlmap import load_yaml
    from reports.repro.snippet import ISA_CAP, settings_for

    host = load_yaml("host.yaml", "cpu_flags: {has: amx_int8}\ntf_onednn: [true]\n")  # the database's own mapping type
    assert settings_for(host) == [("TF_ENABLE_ONEDNN_OPTS", "1")]
    assert settings_for({"cpu_flags": {"lacks": "avx512f"}}) == [ISA_CAP]
