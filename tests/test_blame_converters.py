"""Blame for the converter paths: `onnxruntime` on the hand-built ONNX node is their control."""

from __future__ import annotations

from harness.execution.records import Record
from harness.judge.blame import blame


def rec(backend: str, status: str, ratio: float | None = None) -> Record:
    return Record(case_id="t2d", file="conv_transpose2d.yaml", op="conv_transpose2d", params={}, backend=backend,
                  backend_version="1", device="cpu", dtype="float32", status=status, bound_ratio=ratio)


def test_converter_path_diverging_alone_is_put_down_to_the_converter() -> None:
    rows = blame([rec("torch", "pass"), rec("onnxruntime", "pass"), rec("openvino", "pass"),
                  rec("tf2onnx-ort", "mismatch", 1e6)])
    assert rows[0]["likely_culprit"] == "tf2onnx-ort"
    assert rows[0]["likely_cause"] == {"tf2onnx-ort": "converter"}


def test_shared_with_the_control_it_is_the_runtime() -> None:
    rows = blame([rec("torch", "pass"), rec("onnxruntime", "shape_mismatch"), rec("torch-onnx-ort", "shape_mismatch"),
                  rec("paddle2onnx-ort", "mismatch", 9.0)])
    assert rows[0]["likely_cause"] == {"torch-onnx-ort": "runtime", "paddle2onnx-ort": "runtime"}


def test_no_control_result_no_cause() -> None:
    rows = blame([rec("torch", "pass"), rec("tensorflow", "pass"), rec("paddle2onnx-ort", "mismatch", 9.0),
                  rec("onnxruntime", "unsupported")])
    assert rows[0]["likely_cause"] == {} and rows[0]["likely_culprit"] == "paddle2onnx-ort"
