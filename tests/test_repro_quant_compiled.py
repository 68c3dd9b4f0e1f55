"""`convdiff repro` for quantized results on the paths that convert or compile a model: litert and
litert-ref (TensorFlow's converter, the case's parameters pinned in the flatbuffer, the LiteRT
interpreter) and torch-pt2e (torch.export, torchao's x86 quantizer, inductor).

Each chosen result's script, run alone, reaches the harness's verdict with the same error in units of
y, whatever this host gave (int8 verdicts depend on the CPU's VNNI). The grouped TRANSPOSE_CONV cases
are left out: the interpreter aborts or refuses them at random, in the harness as in a script.

Nightly only (`@pytest.mark.nightly`; CPU shard 2 runs it with every chosen record): 17 s of wall and 21
CPU-s of a cold make test (2026-11-29, 2-core AMD EPYC Zen 4), a conversion per case and per script on three
converting paths. make test keeps the quantized reproducers of seven other targets (tests/test_repro_quant.py:
torch.ao's four engines, ONNX Runtime's two forms and OpenVINO, with the same integer oracle and verdict lines
in the script) and LiteRT's float reproducers (tests/test_repro_deployed.py).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from backends.litert.quant import REQUANT
from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_script_verdict, chosen_records, run_scripts, script_sample

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = [pytest.mark.xdist_group("test_repro_quant_compiled"),
              pytest.mark.nightly("quantized reproducers of three converting paths: see the module docstring")]

Q = "quantized.yaml"
# (file, case id) -> the backends whose result is reproduced (statuses on this AVX2-only host in comments)
CHOSEN: dict[tuple[str, str], tuple[str, ...]] = {
    (Q, "ops[op=conv1d,dtype=uint8,quant=range-full]"): ("litert",),  # pass: NC* transposed to N*C, XNNPACK
    (Q, "channels_last[op=conv2d,dtype=int8]"): ("litert",),  # pass
    (Q, "ops[op=conv_transpose2d,dtype=int8,quant=range-narrow]"): ("litert",),  # pass: TRANSPOSE_CONV
    (Q, "transpose_stride[dtype=uint8,quant=range-full]"): ("litert",),  # rejected: the converter refuses it
    (Q, "dilated[dtype=uint8,quant=per_channel-true+range-narrow]"): ("litert-ref", "torch-pt2e"),  # pass (1 unit off
    # on litert-ref: TFLite's fixed-point multiplier, allowed), pass
    (Q, "grouped[op=conv2d,groups=8,dtype=uint8,quant=per_channel-true+range-full]"): ("litert-ref",),  # pass: depthwise
    (Q, "pinned"): ("torch-pt2e",),  # mismatch without VNNI (oneDNN's int16 pair sums)
    (Q, "structure[dtype=uint8,quant=range-full,padding=1:0x0:2,stride=2]"): ("torch-pt2e",),  # mismatch: F.pad first
    (Q, "structure[dtype=uint8,quant=per_channel-true+range-full,padding=valid,stride=1]"): ("torch-pt2e",),  # rejected
    (Q, "channels_last[op=conv2d,dtype=uint8]"): ("torch-pt2e",),  # mismatch
}
BACKENDS = ["litert", "litert-ref", "torch-pt2e"]


@pytest.fixture(scope="module")
def records() -> list[Record]:
    """The chosen (case, backend) results from one harness run, known issues matched with live host facts."""
    return chosen_records(CHOSEN, BACKENDS, timeout=300.0)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert len(records) == sum(len(b) for b in CHOSEN.values())
    records = script_sample(records, per_backend=2)  # both verdict paths: a pass reports the kernel's rounding
    scripts = [script_for(r) for r in records]
    for rec, script in zip(records, scripts):
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff)\b", ln) for ln in imports), rec.backend
        if rec.backend == "torch-pt2e":
            assert "import torch" in script and "import tensorflow" not in script
        else:  # the TFLite stack: TF's converter and schema, the LiteRT interpreter
            assert "from ai_edge_litert.interpreter import" in script and "import torch" not in script
    results = run_scripts(records, scripts, tmp_path)
    for rec, (rc, out) in zip(records, results):
        where = f"{rec.case_id} on {rec.backend}: harness {rec.status} ({rec.message}); script:\n{out}"
        assert_script_verdict(rec, rc, out, where)
        if rec.backend.startswith("litert") and rec.status == "pass":  # the kernel's rounding, read live as the adapter's
            want = next(k for k, text in REQUANT.items() if f"requantization: {text}" in rec.translation)
            assert f"requantization the kernel declares: {want};" in out, where
    assert {r.status for r in records} >= {"pass", "rejected"}


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    """A record whose calls the adapter no longer makes gets no script claiming to reproduce it."""
    for rec in records:
        if rec.translation:
            changed = replace(rec, translation=rec.translation.replace("y = ", "y = 2 * ", 1))
            with pytest.raises(ReproUnavailable, match="translation of this case has changed"):
                script_for(changed)
