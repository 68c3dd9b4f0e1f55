"""Who is wrong when backends disagree: the oracle settles it, the majority corroborates.

For every case where some backend's values or shape differ from the oracle, list the
backends that agree with the oracle and those that do not. The oracle votes with the
backends that returned values (pass or disagree; a refusal, crash or unsupported case casts
no vote): when a single backend disagrees and at least one agrees with the oracle, the oracle
and its agreeing backends outnumber the dissenter, and that backend is named the likely culprit.
So two targets where one agrees with the oracle name the other (two votes against one); two
dissenters name none.

Converter paths (a framework's exporter, then ONNX Runtime) have a control: `onnxruntime`
running the hand-built ONNX node on the same case. A converter path that disagrees while
its control passes is put down to the converter (`likely_cause`: "converter"); one whose
control disagrees too, to the runtime ("runtime").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from harness.execution.records import Record

DISAGREE = ("mismatch", "shape_mismatch")
# converter path -> the backend that runs the same operator without the converter
CONVERTER_CONTROLS = {"torch-onnx-ort": "onnxruntime", "tf2onnx-ort": "onnxruntime", "paddle2onnx-ort": "onnxruntime"}


def likely_causes(recs: list[Record]) -> dict[str, str]:
    """For each disagreeing converter path whose control ran the case: "converter" or "runtime"."""
    status = {r.backend: r.status for r in recs}
    out = {}
    for r in recs:
        control = status.get(CONVERTER_CONTROLS.get(r.backend, ""))
        if r.status in DISAGREE and control == "pass":
            out[r.backend] = "converter"
        elif r.status in DISAGREE and control in DISAGREE:
            out[r.backend] = "runtime"
    return out


def blame(records: Iterable[Record]) -> list[dict[str, Any]]:
    cases: dict[tuple[str, str, str, str], list[Record]] = defaultdict(list)
    for r in records:
        if not r.backend.startswith(("fault:", "mutant:")):
            cases[(r.file, r.case_id, r.device, r.output)].append(r)
    out = []
    for (file, case_id, device, output), recs in sorted(cases.items()):
        bad = [r for r in recs if r.status in DISAGREE]
        if not bad:
            continue
        good = [r for r in recs if r.status == "pass"]
        culprit = bad[0].backend if len(bad) == 1 and good else None  # the oracle + len(good) >= 2 votes against 1
        out.append({
            "file": file, "case_id": case_id, "device": device, "output": output,
            "agree_with_oracle": sorted(r.backend for r in good),
            "disagree": sorted(r.backend for r in bad),
            "closest_disagreeing": min(bad, key=lambda r: r.bound_ratio if r.bound_ratio is not None else float("inf")).backend,
            "likely_culprit": culprit,
            "likely_cause": likely_causes(recs),
        })
    return out
