"""summary.json's likely_culprit: the oracle votes with the backends that returned values."""

from __future__ import annotations

from harness.execution.records import Record
from harness.judge.blame import blame


def rec(backend: str, status: str, ratio: float | None = None, case_id: str = "c") -> Record:
    return Record(case_id=case_id, file="conv2d.yaml", op="conv2d", params={}, backend=backend, backend_version="1",
                  device="cpu", dtype="float32", status=status, bound_ratio=ratio)


def test_one_target_against_one_reference_names_the_dissenter() -> None:
    # a new backend run beside torch: torch agrees with the oracle, the new one does not (2 votes against 1)
    rows = blame([rec("torch", "pass"), rec("myrt", "mismatch", 40.0)])
    assert rows[0]["likely_culprit"] == "myrt" and rows[0]["agree_with_oracle"] == ["torch"]
    rows = blame([rec("torch", "pass"), rec("myrt", "shape_mismatch")])
    assert rows[0]["likely_culprit"] == "myrt"


def test_no_corroboration_or_two_dissenters_name_none() -> None:
    alone = blame([rec("myrt", "mismatch", 40.0)])  # only the oracle disagrees with it: no backend corroborates
    assert alone[0]["likely_culprit"] is None
    refused = blame([rec("torch", "rejected"), rec("myrt", "mismatch", 40.0)])  # a refusal casts no vote
    assert refused[0]["likely_culprit"] is None and refused[0]["agree_with_oracle"] == []
    two = blame([rec("torch", "pass"), rec("a", "mismatch", 3.0), rec("b", "mismatch", 9.0)])
    assert two[0]["likely_culprit"] is None and two[0]["closest_disagreeing"] == "a"
