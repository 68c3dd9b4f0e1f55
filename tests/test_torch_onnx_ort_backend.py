"""`torch-onnx-ort`: torch.nn modules exported by torch.onnx.export (the pinned torch's default
exporter) and run by ONNX Runtime, through real isolated workers.

Passing cases use integer data (exact in float32) and the torch backend's identities in the
module's forward (F.pad, a crop, movedim). The failing side is a real divergence: ONNX Runtime
refuses the exported ConvTranspose when output_padding >= stride (allowed by PyTorch when
dilation is larger), the same known refusal as on the hand-built node.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from harness.execution.records import Record
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_torch_onnx_ort_backend")

if any(importlib.util.find_spec(m) is None for m in ("torch", "onnx", "onnxruntime", "onnxscript")):
    pytest.skip("torch/onnx/onnxruntime/onnxscript are not installed", allow_module_level=True)

COMMON = dict(in_channels=4, out_channels=6, bias=True, data="integers")
CASES = [
    make_case(id="t2d_asym_nhwc", op="conv_transpose2d", input_size=[5, 4], kernel_size=3, stride=2,
              padding=[[1, 0], [0, 2]], output_padding=1, groups=2, layout="channels_last", **COMMON),
    make_case(id="c1d_same", op="conv1d", input_size=9, kernel_size=4, padding="same", **COMMON),
    make_case(id="t1d_outpad_dilation", op="conv_transpose1d", input_size=9, kernel_size=3, stride=1, dilation=2,
              output_padding=1, in_channels=4, out_channels=6),
]


@pytest.fixture(scope="module")
def records() -> dict[str, Record]:
    return {r.case_id: r for r in run_on(CASES, ["torch-onnx-ort"], timeout=180, known=True)}


def test_passes_exactly(records: dict[str, Record]) -> None:
    for cid in ("t2d_asym_nhwc", "c1d_same"):
        r = records[cid]
        assert r.status == "pass" and r.max_abs_err == 0.0, (cid, r.status, r.message)


def test_translation_names_the_module_exporter_and_opset(records: dict[str, Record]) -> None:
    t = records["t2d_asym_nhwc"].translation
    assert "m = torch.nn.ConvTranspose2d(" in t and "output_padding=(1, 1)" in t
    assert "exact identity: asymmetric transposed padding" in t and "movedim" in t
    assert re.search(r"torch\.onnx\.export\(.*# default exporter \(dynamo=(True|False): .*opset \d+", t), t
    assert "padding='same'" in records["c1d_same"].translation


def test_output_padding_ge_stride_is_the_known_runtime_refusal(records: dict[str, Record]) -> None:
    r = records["t1d_outpad_dilation"]
    assert r.status == "rejected" and r.known_issue == "ort-convtranspose-output-padding-ge-stride", r.message
