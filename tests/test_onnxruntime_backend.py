"""`onnxruntime`: the hand-built one-node ONNX model in ONNX Runtime, through real isolated workers.

Integer data make float32 exact, so a pass here is a semantic pass (error 0). The failing
side is a real divergence pinned in cases/known_issues.yaml: ONNX Runtime refuses a
ConvTranspose whose output_padding is >= stride, which PyTorch allows when dilation is larger.
"""

from __future__ import annotations

import importlib.util

import pytest

from backends.onnx.model import node_attributes
from harness.execution.records import Record
from harness.execution.runner import run_cases
from harness.judge.verdict import Verdicts
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_onnxruntime_backend")

if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
    pytest.skip("onnxruntime/onnx are not installed", allow_module_level=True)

COMMON = dict(batch=2, in_channels=4, out_channels=6, bias=True, data="integers")
CASES = [
    make_case(id="t2d_outpad", op="conv_transpose2d", input_size=[5, 6], kernel_size=3, stride=2, padding=1,
              output_padding=1, groups=2, **COMMON),
    make_case(id="c1d_nwc_asym", op="conv1d", input_size=9, kernel_size=3, stride=2, padding=[[2, 0]],
              layout="channels_last", **COMMON),
    make_case(id="c3d_same", op="conv3d", input_size=[4, 5, 3], kernel_size=2, stride=2, padding="same", **COMMON),
    make_case(id="t1d_outpad_dilation", op="conv_transpose1d", input_size=9, kernel_size=3, stride=1, dilation=2,
              output_padding=1, in_channels=4, out_channels=6),
    make_case(id="c2d_f64", op="conv2d", input_size=6, kernel_size=3, dtype="float64", in_channels=2, out_channels=3),
]


@pytest.fixture(scope="module")
def records() -> dict[str, Record]:
    return {r.case_id: r for r in run_on(CASES, ["onnxruntime"], known=True)}


def test_node_attributes_say_the_case_natively() -> None:
    attrs, notes = node_attributes(CASES[0])
    assert attrs == {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [1, 1], "group": 2,
                     "pads": [1, 1, 1, 1], "output_padding": [1, 1]} and notes == []
    assert node_attributes(CASES[2])[0]["auto_pad"] == "SAME_UPPER"  # TF's SAME: odd pad after


def test_passes_exactly_and_records_the_session(records: dict[str, Record]) -> None:
    for cid in ("t2d_outpad", "c1d_nwc_asym", "c3d_same"):
        r = records[cid]
        assert r.status == "pass" and r.max_abs_err == 0.0, (cid, r.status, r.message)
        assert "providers=['CPUExecutionProvider']" in r.translation
    assert "output_padding=[1, 1]" in records["t2d_outpad"].translation
    nwc = records["c1d_nwc_asym"].translation
    assert "pads=[2, 0]" in nwc and "exact identity: channels_last: Transpose" in nwc


def test_output_padding_ge_stride_is_the_known_runtime_refusal(records: dict[str, Record]) -> None:
    r = records["t1d_outpad_dilation"]
    assert r.status == "rejected" and "output_padding" in r.message
    assert r.known_issue == "ort-convtranspose-output-padding-ge-stride"


def test_dtypes_follow_the_live_kernel_registry(records: dict[str, Record]) -> None:
    r = records["c2d_f64"]
    assert r.status in ("pass", "unsupported"), r.message
    if r.status == "unsupported":  # the CPU provider registers float only (read from ORT, not assumed)
        assert "registers no float64 Conv kernel on CPUExecutionProvider" in r.message


def test_cuda_without_the_cuda_provider_skips_with_the_reason() -> None:
    got: list[Record] = []
    info = run_cases(CASES[:1], [("onnxruntime", "cuda")], got.append, Verdicts())
    if not info.skipped:
        pytest.skip("this onnxruntime has the CUDA provider: the cuda path runs")
    assert "CUDAExecutionProvider" in info.skipped["onnxruntime-cuda"] and not got
