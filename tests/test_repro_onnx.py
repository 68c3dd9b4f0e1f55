"""`convdiff repro` for the ONNX backends: each script, run alone, reaches the harness's verdict.

Corpus cases, one harness run for all (one worker per backend), then each script in its own
interpreter, two at a time. The failing verdicts are real divergences behind known issues:
ONNX Runtime refusing auto_pad SAME with dilation, tf2onnx's shifted ConvTranspose pads, and
(on hosts where OpenVINO defaults to bf16, read live by the harness) OpenVINO's bf16 conv.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_chosen_statuses, assert_script_verdict, chosen_records, run_scripts, script_sample

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_onnx")

if any(importlib.util.find_spec(m) is None for m in ("onnx", "onnxruntime", "openvino", "onnxscript", "tf2onnx",
                                                     "paddle2onnx")):
    pytest.skip("the onnx extras are not installed", allow_module_level=True)

# (file, case id) -> {backend: the status the harness gives it, and why}
CHOSEN: dict[tuple[str, str], dict[str, str]] = {
    ("conv1d.yaml", "basic_bias"): {"onnxruntime": "pass", "torch-onnx-ort": "pass", "paddle2onnx-ort": "pass",
                                    "openvino": "mismatch"},  # openvino-cpu-default-bf16-inference-precision
    ("conv1d.yaml", "stride_padding_dilation[stride=1,padding=same,dilation=2]"): {
        "onnxruntime": "rejected"},  # ort-conv-same-dilation
    ("conv_transpose2d.yaml", "out_pad_stride2[kernel_size=3]"): {
        "tf2onnx-ort": "mismatch"},  # tf2onnx-convtranspose-pads-from-output-shape
    ("paddle_padding.yaml", "pairs_conv1d[layout=channels_last,stride=2]"): {"tf2onnx-ort": "pass"},
}
BACKENDS = ["onnxruntime", "openvino", "torch-onnx-ort", "tf2onnx-ort", "paddle2onnx-ort"]
# The status above holds only where the known issue's host selector matches this machine's live facts.
HOST_DEPENDENT = {("conv1d.yaml", "basic_bias", "openvino"): "openvino-cpu-default-bf16-inference-precision"}


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return chosen_records(CHOSEN, BACKENDS, timeout=240)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert_chosen_statuses(records, CHOSEN, HOST_DEPENDENT)
    records = script_sample(records)
    scripts = [script_for(r) for r in records]
    for script in scripts:
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff)\b", ln) for ln in imports)
        assert not ("import tensorflow" in script and "import paddle" in script)
    results = run_scripts(records, scripts, tmp_path)
    for rec, (rc, out) in zip(records, results):
        where = f"{rec.case_id} on {rec.backend}: harness {rec.status} ({rec.message}); script:\n{out}"
        assert_script_verdict(rec, rc, out, where)


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    for rec in records:
        if rec.translation:
            stale = replace(rec, translation=rec.translation.replace("(", "(0, "))
            with pytest.raises(ReproUnavailable, match="translation of this case has changed"):
                script_for(stale)
