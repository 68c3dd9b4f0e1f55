"""`convdiff repro` for the five TVM backends: each script, run alone, reaches the harness's verdict.

Cases are corpus cases; the failing ones sit behind known issues (cases/known_issues.yaml),
so those verdicts are real TVM divergences. One harness run for all (compile cache off,
so nothing is read from or written to a shared cache), then each script in its own
interpreter, two at a time: every script compiles from scratch, as a bug reporter's would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_script_verdict, chosen_records, run_scripts, script_sample

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_tvm")

ROOT = Path(__file__).resolve().parent.parent
# (file, case id) -> {backend: the status the harness gives it, and why}
CHOSEN: dict[tuple[str, str], dict[str, str]] = {
    ("paddle_padding.yaml", "pairs_conv1d[layout=channels_last,stride=1]"): {  # NWC/WIO; Transposes; tf.pad
        "tvm": "pass", "tvm-onnx-import": "pass", "tvm-tflite-import": "pass"},
    ("paddle_padding.yaml", "pairs_t2d[layout=channels_last]"): {
        "tvm": "rejected",  # tvm-transpose-channels-last-not-lowered
        "tvm-torch-import": "pass"},  # movedim + symmetric padding, then the crop
    ("tf_padding.yaml", "same_t2d[kernel_size=1,stride=2]"): {
        "tvm-onnx-import": "shape_mismatch",  # tvm-onnx-convtranspose-same-short-kernel
        "tvm-tflite-import": "rejected"},  # tvm-tflite-transpose-conv-nhwc-not-lowered
    ("bug_classes.yaml", "grouped_transpose_bias_batch2"): {"tvm-onnx-import-output-shape": "pass"},
    ("paddle_padding.yaml", "depthwise_t[op=conv_transpose1d,layout=channels_last]"): {
        "tvm-onnx-import-output-shape": "shape_mismatch"},  # tvm-onnx-convtranspose-output-shape-ignored
    ("conv_transpose1d.yaml", "dtypes[dtype=float64,data=normal]"): {
        "tvm-torch-import": "mismatch"},  # tvm-torch-import-out-dtype-float32
}
BACKENDS = ["tvm", "tvm-torch-import", "tvm-onnx-import", "tvm-onnx-import-output-shape", "tvm-tflite-import"]


@pytest.fixture(scope="module")
def records() -> Iterator[list[Record]]:
    """The chosen (case, backend) results from one harness run, compile cache off."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONVDIFF_CACHE", "off")  # workers inherit it
        yield chosen_records(CHOSEN, BACKENDS, timeout=240)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    got = {(Path(r.file).name, r.case_id, r.backend): r.status for r in records}
    want = {(f, cid, b): s for (f, cid), per in CHOSEN.items() for b, s in per.items()}
    assert got == want  # the chosen known divergences still diverge (else pick new cases)
    records = script_sample(records)
    scripts = [script_for(r) for r in records]
    for script in scripts:
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff)\b", ln) for ln in imports)
        assert "tvm.compile(" in script and not re.search(r"load_module|export_library|convdiff-cache", script)
    results = run_scripts(records, scripts, tmp_path)
    for rec, (rc, out) in zip(records, results):
        where = f"{rec.case_id} on {rec.backend}: harness {rec.status} ({rec.message}); script:\n{out[-4000:]}"
        assert_script_verdict(rec, rc, out, where)
        if rec.status != "rejected" and rec.max_abs_err is None:  # shape or dtype: the harness's own message
            assert rec.message in out.splitlines(), where


def test_scripts_make_the_recorded_calls(records: list[Record]) -> None:
    """The built graph is the one the translation describes: its op call, module, attributes, TF call."""
    for rec in records:
        script = script_for(rec)
        for line in rec.translation.splitlines():
            if line.startswith("y = relax.op."):  # tvm: the op call, inside bb.emit
                assert f"bb.emit({line.removeprefix('y = ')})" in script, line
            elif line.startswith("m = torch.nn."):  # tvm-torch-import: the module, weights copied in
                assert "self." + line.split("  #")[0] in script, line
            elif line.startswith("node = onnx.helper.make_node("):  # the node's attributes, verbatim
                attrs = line.split("['y'], ", 1)[1].split(")  #")[0]
                assert attrs in script, line
            elif line.startswith("y = tf.nn."):  # tvm-tflite-import: the same op
                assert line.split("(")[0] in script, line


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    """A record whose build the adapter no longer makes gets no script; where the library came from does not matter."""
    ran = [r for r in records if r.translation]
    assert {r.backend for r in ran} == set(BACKENDS)
    for rec in ran:
        cached = re.sub(r"^exe = .*$", "exe = tvm.runtime.load_module('x.so')  # compile cache hit", rec.translation, flags=re.M)
        assert script_for(replace(rec, translation=cached)) == script_for(rec)
        stale = replace(rec, translation=rec.translation.replace("(x", "(2 * x", 1))
        with pytest.raises(ReproUnavailable, match="translation of this case has changed"):
            script_for(stale)
