"""`convdiff repro` for epilogue cases on the ONNX runtimes, the converter paths and the TVM paths: each
script, run alone, reaches the harness's verdict.

The epilogue reaches these frameworks as graph nodes with initializers (onnxruntime, openvino,
tvm-onnx-import), as a module's buffers and inputs through an exporter (torch-onnx-ort,
tvm-torch-import), as constants made inside a traced tf.function (tf2onnx-ort, tvm-tflite-import), as
a wrapping Paddle layer (paddle2onnx-ort) or as Relax parameters (tvm). One harness run, then each
script in its own interpreter; the verdicts are the records' (this host's).

Nightly only (`@pytest.mark.nightly`): 21.6 CPU-s of a cold make test (2026-11-29, 2-core AMD EPYC Zen 4,
measured alone in one process), a build per case and backend and a script per backend. make test keeps these
ten paths' reproducer templates without an epilogue (tests/test_repro_onnx.py, tests/test_repro_tvm.py) and
the epilogue's translation into scripts on the eager frameworks (tests/test_repro_epilogue.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.execution.records import Record
from tests.epilogue_repro import assert_scripts_reach_the_records, records_for

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = [pytest.mark.xdist_group("test_repro_epilogue_converters"),
              pytest.mark.nightly("ten converter and TVM paths' epilogue scripts: see the module docstring")]

CHOSEN = [("epilogues.yaml", "smoke_fold_transpose"),                                    # scale, shift, relu
          ("epilogues.yaml", "chain_strided[op=conv2d,epilogue=residualxclampxtanh]"),    # a channels_first residual
          ("epilogues.yaml", "chain_grouped[op=conv1d,epilogue=mul_scalarxadd_scalarxsigmoid]"),  # scalars, grouped
          ("epilogues.yaml", "smoke_half[dtype=float16,epilogue=residualxhardswish]")]  # float16
BACKENDS = ["onnxruntime", "openvino", "torch-onnx-ort", "tf2onnx-ort", "paddle2onnx-ort", "tvm", "tvm-torch-import",
            "tvm-onnx-import", "tvm-onnx-import-output-shape", "tvm-tflite-import"]


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return records_for(CHOSEN, BACKENDS)


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    assert_scripts_reach_the_records(records, tmp_path, BACKENDS)
