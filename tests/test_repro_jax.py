"""`convdiff repro` for JAX: each script, run alone, reaches the harness's verdict.

One harness run for the chosen corpus cases, then each script in its own interpreter.
JAX passes the whole forward corpus here, so the failing side is the adapter's: a record
whose translation the adapter no longer makes, and an invalid case, get no script.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_script_verdict, chosen_records, run_scripts, script_sample

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_jax")

CHOSEN: dict[tuple[str, str], dict[str, str]] = {
    ("bug_classes.yaml", "zero_fill_output_padding_seed"): {"jax": "pass"},      # output_padding folded into padding
    ("bug_classes.yaml", "conv_transpose1d_grouped_stride"): {"jax": "pass"},    # grouped: lhs_dilation identity
    ("bug_classes.yaml", "flip_asymmetric_kernel"): {"jax": "pass"},             # conv, channels_last
    ("conv_transpose1d.yaml", "channels_last[padding=1,groups=2]"): {"jax": "pass"},
    ("conv_transpose3d.yaml", "dtypes[dtype=bfloat16,data=normal]"): {"jax": "pass"},
    ("conv_transpose1d.yaml", "dtypes[dtype=float16,data=normal]"): {"jax": "pass"},
}


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return chosen_records(CHOSEN, ["jax"])


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert {(Path(r.file).name, r.case_id): r.status for r in records} == {k: v["jax"] for k, v in CHOSEN.items()}
    records = script_sample(records)
    scripts = [script_for(r) for r in records]
    for rec, script in zip(records, scripts):
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff|ml_dtypes|torch|tensorflow)\b", ln)
                       for ln in imports)
        for line in rec.translation.splitlines():  # the adapter's own lines, identities as comments
            assert line.strip() in script, (rec.case_id, line)
    for rec, (rc, out) in zip(records, run_scripts(records, scripts, tmp_path)):
        assert_script_verdict(rec, rc, out, f"{rec.case_id}: harness {rec.status}; script:\n{out}")


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    rec = replace(records[0], translation=records[0].translation.replace("padding=", "padding_x="))
    with pytest.raises(ReproUnavailable, match="changed since the record"):
        script_for(rec)


def test_an_invalid_case_has_no_script(records: list[Record]) -> None:
    rec = records[0]
    bad = replace(rec, params={**rec.params, "groups": 7, "expect": "invalid"})  # 7 divides no channel count here
    with pytest.raises(ReproUnavailable, match="invalid"):
        script_for(bad)
