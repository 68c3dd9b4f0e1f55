"""`convdiff repro` for the deployed float paths (torch-inductor, tensorflow-graph, tf-xla, litert, litert-ref,
paddle-inference, tvm-bound): each script, run alone, reaches the harness's verdict, epilogue or not.

One harness run of corpus cases (epilogue chains after transposed, strided and channels_last convs,
and two without an epilogue), then each script in its own interpreter. The verdicts are the records'
(this host's), with one finding pinned because its known issue holds on every host: inductor's freezing
folds a per-channel constant after a transposed conv along the wrong weight axis.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.epilogue_repro import JUDGED, assert_scripts_reach_the_records, records_for
from tests.helpers import assert_script_verdict, run_scripts

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_deployed")

CHOSEN = [("epilogues.yaml", "smoke_fold_transpose"),
          ("epilogues.yaml", "chain_channels_last[op=conv_transpose1d,epilogue=batch_normxgeluxresidual]"),
          ("epilogues.yaml", "chain_strided[op=conv2d,epilogue=residualxclampxtanh]"),
          ("bug_classes.yaml", "flip_asymmetric_kernel"),           # no epilogue: the conv alone, deployed
          ("bug_classes.yaml", "zero_fill_output_padding_seed")]    # no epilogue, a transposed conv
BACKENDS = ["torch-inductor", "tensorflow-graph", "tf-xla", "litert", "litert-ref", "paddle-inference", "tvm-bound"]


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return records_for(CHOSEN, BACKENDS)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert_scripts_reach_the_records(records, tmp_path, BACKENDS)


def test_the_inductor_fold_finding_reproduces(records: list[Record], tmp_path: Path) -> None:
    """smoke_fold_transpose ([scale, shift, relu] after a stride-2 conv_transpose2d, C_in == C_out) on
    torch-inductor: the known mismatch, on every host; its script alone shows it, with the harness's numbers."""
    rec = next(r for r in records if r.backend == "torch-inductor" and r.case_id == "smoke_fold_transpose")
    assert (rec.status, rec.known_issue) == ("mismatch", "inductor-freezing-transpose-fold-wrong-axis")
    script = script_for(rec)
    assert "torch._inductor.config.patch(freezing=True)" in script and 'backend="inductor", fullgraph=True' in script
    assert "self.register_buffer(name, value.clone())" in script  # the per-channel constant as the module's buffer
    [(rc, out)] = run_scripts([rec], [script], tmp_path)
    assert_script_verdict(rec, rc, out, f"script:\n{out}")
    assert re.search(r"^verdict: mismatch$", out, re.M) and rc == 1


def test_a_changed_translation_is_refused(records: list[Record]) -> None:
    """A record whose calls the adapter no longer makes gets no script that would claim to reproduce it."""
    refused = set()
    for rec in records:
        if rec.translation and rec.status in JUDGED:
            stale = replace(rec, translation=re.sub(r"\by = ", "y = 2 * ", rec.translation, count=1))
            with pytest.raises(ReproUnavailable, match="changed since the record"):
                script_for(stale)
            refused.add(rec.backend)
    assert refused == set(BACKENDS)
