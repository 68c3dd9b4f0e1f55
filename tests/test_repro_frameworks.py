"""`convdiff repro` for TensorFlow, Keras and Paddle: each script, run alone, reaches the harness's verdict.

Cases are corpus cases behind known issues (cases/known_issues.yaml), so the failing
verdicts are real divergences: one harness run for all (one worker per backend), then
each script in its own interpreter, two at a time (only one framework per process).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_chosen_statuses, assert_script_verdict, chosen_records, run_scripts, script_sample

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_frameworks")

ROOT = Path(__file__).resolve().parent.parent
# (file, case id) -> {backend: the status the harness gives it, and why}
CHOSEN: dict[tuple[str, str], dict[str, str]] = {
    ("paddle_padding.yaml", "pairs_t1d[layout=channels_first]"): {"tensorflow": "pass"},  # VALID + crop, NC*
    ("conv3d.yaml", "dtypes[dtype=float16,data=normal]"): {"tensorflow": "mismatch"},  # tf-cpu-half-accumulation-3d-*
    ("paddle_padding.yaml", "outpad_lt_stride_dilated"): {"tensorflow": "rejected"},  # ...transpose2d-explicit-dilation
    ("paddle_padding.yaml", "pairs_conv1d[layout=channels_last,stride=2]"): {"tensorflow-keras": "pass"},
    ("tf_padding.yaml", "keras_bias_axis_channels_first"): {"tensorflow-keras": "mismatch"},  # keras-bias-add-axis-guess
    ("paddle_padding.yaml", "outpad_ge_stride[op=conv_transpose1d,stride=1]"): {
        "tensorflow-keras": "rejected", "paddle": "rejected"},  # keras-output-padding-lt-stride, paddle-output-padding-ge-stride
    ("paddle_padding.yaml", "pairs_t2d[layout=channels_last]"): {"paddle": "pass", "paddle-output-size": "pass"},
    ("paddle_padding.yaml", "same_t1d_odd[kernel_size=3,stride=2]"): {
        "paddle": "shape_mismatch",  # paddle-same-transpose-size
        "paddle-output-size": "mismatch"},  # paddle-output-size-same-transpose-crop
}
BACKENDS = ["tensorflow", "tensorflow-keras", "paddle", "paddle-output-size"]
# Verdicts that depend on the host: the status above holds only where the known issue's `host:`
# selector matches this machine's live facts (the harness then records it); elsewhere the case passes.
HOST_DEPENDENT = {("tf_padding.yaml", "keras_bias_axis_channels_first", "tensorflow-keras"): "keras-bias-add-axis-guess",
                  ("conv3d.yaml", "dtypes[dtype=float16,data=normal]", "tensorflow"): (
                      "tf-cpu-half-accumulation-3d-without-onednn", "tf-cpu-half-accumulation-3d-without-avx512-fp16")}


@pytest.fixture(scope="module")
def records() -> list[Record]:
    """The chosen (case, backend) results from one harness run."""
    return chosen_records(CHOSEN, BACKENDS)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert_chosen_statuses(records, CHOSEN, HOST_DEPENDENT)
    records = script_sample(records)
    scripts = [script_for(r) for r in records]
    for script in scripts:
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff|ml_dtypes|torch)\b", ln) for ln in imports)
        assert ("import tensorflow" in script) != ("import paddle" in script)
    results = run_scripts(records, scripts, tmp_path)
    for rec, (rc, out) in zip(records, results):
        where = f"{rec.case_id} on {rec.backend}: harness {rec.status} ({rec.message}); script:\n{out}"
        assert_script_verdict(rec, rc, out, where)


def test_scripts_make_the_recorded_calls(records: list[Record]) -> None:
    """The framework lines are the adapter's translation (TF, Keras) or contain its call (Paddle)."""
    for rec in records:
        script = script_for(rec)
        for line in rec.translation.splitlines():
            if line.startswith(("w = ", "y = ", "x = ")):
                assert line.strip() in script, (rec.backend, line)
    keras = next(r for r in records if r.backend == "tensorflow-keras" and r.status == "rejected")
    assert "except Exception as exc:" in script_for(keras)  # no record of the layout: the adapter's retry


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    """A record whose calls the adapter no longer makes gets no script that would claim to reproduce it."""
    for rec in records:
        if rec.translation:
            stale = replace(rec, translation=rec.translation.replace("y = ", "y = 2 * ", 1))
            with pytest.raises(ReproUnavailable, match="translation of this case has changed"):
                script_for(stale)
