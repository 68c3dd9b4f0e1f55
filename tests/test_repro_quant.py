"""`convdiff repro` for quantized (uint8/int8) results on torch.ao, ONNX Runtime and OpenVINO.

The script's own part (inputs and parameters from the seed, the exact integer truth) equals the
harness's for corpus and hand-made cases; then each chosen result's script, run alone, reaches the
harness's verdict with the same error in units of y. int8 verdicts depend on the CPU (u8 x s8 pair
sums saturate in int16 without VNNI), so no status is fixed here: the script must agree with the
record, whatever this host gave. reports/repro_quant_* writes the scripts; litert and torch-pt2e are
tests/test_repro_quant_compiled.py.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.execution.records import Record
from harness.model.build import make_case
from harness.model.case import Case
from harness.model.loader import load_cases
from harness.numerics.inputs import make_inputs
from harness.numerics.quant import accumulate, quant_reference
from reports.repro.quant import reference_source
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_script_verdict, chosen_records, run_scripts, script_sample

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_quant")

ROOT = Path(__file__).resolve().parent.parent
Q = "quantized.yaml"
# (file, case id) -> the backends whose result is reproduced (statuses on this AVX2-only host in comments)
CHOSEN: dict[tuple[str, str], tuple[str, ...]] = {
    (Q, "pinned"): ("torch-ao-fbgemm", "onnxruntime"),  # mismatch without VNNI (int16 pair sums)
    ("bug_classes.yaml", "quant_u8_full_seed"): ("torch-ao-x86", "onnxruntime-qdq", "openvino"),  # mismatch
    ("bug_classes.yaml", "quant_per_channel_seed"): ("torch-ao-qnnpack", "onnxruntime-qdq"),  # pass, mismatch
    (Q, "structure[dtype=int8,quant=per_channel-true+range-full,padding=1:0x0:2,stride=1]"): (
        "torch-ao-qnnpack", "onnxruntime", "openvino"),  # rejected (qint8 x), pass, pass or rejected
    (Q, "ops[op=conv_transpose1d,dtype=uint8,quant=per_channel-true+range-full]"): (
        "torch-ao-fbgemm", "onnxruntime"),  # rejected (per-channel transposed), pass (QDQ)
    (Q, "transpose_stride[dtype=uint8,quant=range-full]"): (
        "torch-ao-onednn", "torch-ao-qnnpack", "openvino"),  # rejected (output_padding), pass, pass
    (Q, "channels_last[op=conv_transpose2d,dtype=uint8]"): ("torch-ao-x86", "onnxruntime-qdq"),  # mismatch, pass
    (Q, "grouped[op=conv2d,groups=8,dtype=uint8,quant=per_channel-true+range-full]"): ("torch-ao-onednn",),  # pass
    (Q, "ops[op=conv3d,dtype=int8,quant=per_channel-true+range-narrow]"): ("onnxruntime-qdq",),  # pass
    (Q, "ops[op=conv_transpose3d,dtype=uint8,quant=range-narrow]"): ("torch-ao-x86",),  # pass
    (Q, "ops[op=conv_transpose2d,dtype=uint8,quant=range-narrow]"): ("torch-ao-onednn",),  # mismatch (C_in != C_out)
}
BACKENDS = ["torch-ao-x86", "torch-ao-fbgemm", "torch-ao-onednn", "torch-ao-qnnpack",
            "onnxruntime", "onnxruntime-qdq", "openvino"]
FRAMEWORK = {"torch-ao": "import torch", "onnxruntime": "import onnxruntime", "openvino": "import openvino"}
# hand-made cases the corpus lacks: transposes with dilation, asymmetric pads, SAME, output_padding and
# groups in 1-D and 3-D, pinned per-channel scales and weight zero points, batch 2, channels_last
VARIETY: list[dict[str, Any]] = [
    dict(op="conv_transpose1d", in_channels=4, out_channels=6, input_size=5, kernel_size=3, stride=3,
         padding=[[2, 0]], output_padding=1, dilation=2, groups=2, dtype="uint8"),
    dict(op="conv_transpose2d", in_channels=3, out_channels=6, input_size=[4, 5], kernel_size=[2, 3], stride=[2, 1],
         padding="same", groups=3, dtype="int8", layout="channels_last", bias=True,
         quant={"per_channel": True, "range": "narrow"}),
    dict(op="conv_transpose3d", in_channels=2, out_channels=4, input_size=[2, 3, 3], kernel_size=2, stride=2,
         padding=[[1, 0], [0, 1], [1, 1]], output_padding=[1, 0, 1], dtype="uint8", bias=True,
         quant={"per_channel": True, "w_zero_point": 3, "x_zero_point": 7, "w_scale": [0.01, 0.02, 0.03, 0.04]}),
    dict(op="conv3d", in_channels=4, out_channels=2, input_size=[3, 4, 5], kernel_size=[2, 1, 3], stride=[1, 2, 1],
         padding=[[0, 1], [2, 0], [1, 1]], dilation=[1, 1, 2], groups=2, dtype="int8", bias=True,
         quant={"per_channel": True}),
    dict(op="conv1d", in_channels=6, out_channels=3, input_size=9, kernel_size=4, stride=2, padding="same",
         dilation=2, groups=3, dtype="uint8", layout="channels_last"),
    dict(op="conv_transpose2d", in_channels=2, out_channels=2, input_size=3, kernel_size=1, stride=3,
         padding="same", dtype="uint8", bias=True),
    dict(op="conv2d", batch=2, in_channels=3, out_channels=4, input_size=[6, 5], kernel_size=3, padding="valid",
         stride=2, dtype="int8", quant={"y_scale": 0.3, "y_zero_point": -5, "x_scale": 0.05, "range": "narrow"}),
    dict(op="conv_transpose1d", in_channels=2, out_channels=3, input_size=4, kernel_size=5, padding=[[4, 3]],
         dtype="int8", bias=True),
]


def _record(case: Case, backend: str = "onnxruntime") -> Record:
    return Record(case_id=case.id, file=Path(case.file).name, op=case.op, params=case.params(), backend=backend,
                  backend_version="0", device="cpu", dtype=case.dtype, status="pass")


def _reference_cases() -> list[Case]:
    corpus = [c for c in load_cases([str(ROOT / "cases" / Q), str(ROOT / "cases" / "bug_classes.yaml")])
              if c.quantized and c.geometry is not None]
    return corpus + [make_case(id=f"variety_{i}", **fields) for i, fields in enumerate(VARIETY)]


def test_the_script_draws_and_judges_as_the_harness() -> None:
    """x, w, b, every parameter, the accumulator and the requantized truth equal the harness's (exec of the
    script's first part, before any framework), for the corpus's quantized cases and the hand-made ones."""
    for case in _reference_cases():
        ns: dict[str, Any] = {}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(reference_source(_record(case), case), case.id, "exec"), ns)  # the script's own first part
        inputs = make_inputs(case)
        p = inputs.quant
        assert p is not None
        ref, _ = quant_reference(case, inputs.x, inputs.w, inputs.b, p)
        x_nc = np.moveaxis(inputs.x, -1, 1) if case.channels_last else inputs.x
        acc = accumulate(case, x_nc, inputs.w, inputs.b, p.x_zero_point, p.w_zero_point)
        assert ns["x_case"].dtype == inputs.x.dtype and np.array_equal(ns["x_case"], inputs.x), case.id
        assert ns["w_int8"].dtype == np.int8 and np.array_equal(ns["w_int8"], inputs.w), case.id
        assert (ns["b_int32"] is None) == (inputs.b is None), case.id
        assert inputs.b is None or np.array_equal(ns["b_int32"], inputs.b), case.id
        assert (ns["x_scale"], ns["x_zp"], ns["w_zp"], ns["y_scale"], ns["y_zp"], ns["PER_CHANNEL"]) == (
            p.x_scale, p.x_zero_point, p.w_zero_point, p.y_scale, p.y_zero_point, p.per_channel), case.id
        assert np.array_equal(ns["w_scale"], p.w_scale), case.id
        assert np.array_equal(ns["acc"], acc), case.id
        assert ns["ref"].shape == ref.shape and np.array_equal(ns["ref"], ref), case.id


@pytest.fixture(scope="module")
def records() -> list[Record]:
    """The chosen (case, backend) results from one harness run, known issues matched with live host facts."""
    return chosen_records(CHOSEN, BACKENDS)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert len(records) == sum(len(b) for b in CHOSEN.values())
    records = script_sample(records, per_backend=2)  # both verdict paths of the integer template
    scripts = [script_for(r) for r in records]
    for rec, script in zip(records, scripts):
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff)\b", ln) for ln in imports), rec.backend
        family = next(k for k in FRAMEWORK if rec.backend.startswith(k))
        assert [k for k, line in FRAMEWORK.items() if line in script] == [family], rec.backend
    results = run_scripts(records, scripts, tmp_path)
    for rec, (rc, out) in zip(records, results):
        where = f"{rec.case_id} on {rec.backend}: harness {rec.status} ({rec.message}); script:\n{out}"
        assert_script_verdict(rec, rc, out, where)
    assert {r.status for r in records} >= {"pass", "mismatch", "rejected"}  # failing verdicts reproduced too


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    """A record whose model lines the adapter no longer writes gets no script claiming to reproduce it."""
    for rec in records:
        if rec.translation:
            changed = replace(rec, translation=rec.translation.replace("y = ", "y = 2 * ", 1))
            with pytest.raises(ReproUnavailable, match="translation of this case has changed"):
                script_for(changed)


def test_a_backend_without_a_quantized_script_says_so() -> None:
    case = make_case(id="q", op="conv2d", in_channels=2, out_channels=2, input_size=4, kernel_size=3, dtype="uint8")
    with pytest.raises(ReproUnavailable, match="no standalone quantized script for tvm"):
        script_for(_record(case, "tvm"))
    with pytest.raises(ReproUnavailable, match="test doubles"):  # the quantized mutants are NumPy simulations
        script_for(_record(case, "mutant:quant_ignored_zero_point"))
