"""Synthetic run records for the report's tests: a corpus-shaped mix of statuses, and shards on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.execution.records import Record
from harness.judge.summary import summarize

ROOT = Path(__file__).resolve().parent.parent
EVIL_TAG = "<script>alert(\"x\")</script>&'q'"
EVIL_FILE = 'a<b>&"c".yaml'
OPS = ("conv1d", "conv2d", "conv_transpose2d", "conv3d")


def where_of(rank: int, bad_at: int) -> dict[str, Any]:
    names = ("N", "C", *("D", "H", "W")[3 - rank:])
    axes = {n: {"bad_indices": str(bad_at) if n == names[-1] else "0", "length": 8,
                "profile": [3.5 if (i == bad_at or n != names[-1]) else 0.2 for i in range(8)]} for n in names}
    heat = [[3.5 if j == bad_at else 0.1 for j in range(8)] for _ in range(8)]
    heat[0][0] = None  # a non-finite cell
    return {"bad": 8, "total": 512, "region": "border", "worst_index": [0] * len(names), "axes": axes,
            "heat": {"axes": list(names[-2:]), "fixed": {}, "block": [1, 1], "values": heat}}


def synthetic(n: int, fail_every: int = 10, backends: tuple[str, ...] = ("torch", "tensorflow", "paddle")) -> list[Record]:
    """n records over ops x backends; every `fail_every`-th one a mismatch (some known), a few crashes/unsupported."""
    out = []
    for i in range(n):
        op, backend = OPS[i % len(OPS)], backends[(i // len(OPS)) % len(backends)]
        rank = int(op[-2])
        status, ratio, known, block = "pass", 0.05, None, i // len(OPS)
        if block % fail_every == 0:
            status, ratio = "mismatch", 2.0 + (i % 7)
            known = "known_tf_thing" if backend == "tensorflow" else None
        elif block % (fail_every * 7) == 3:
            status, ratio = "crash", None
        elif block % (fail_every * 5) == 4:
            status, ratio = "unsupported", None
        tags = ["basic", f"t{i % 5}"] + ([EVIL_TAG] if i % 13 == 0 else [])
        params = {"op": op, "in_channels": 4, "out_channels": 6, "input_size": [9] * rank, "kernel_size": [3] * rank,
                  "batch": 1, "stride": [1] * rank, "padding": [[1, 1]] * rank, "output_padding": [0] * rank,
                  "dilation": [1] * rank, "groups": 1, "bias": i % 2 == 0, "layout": "channels_first",
                  "dtype": "float32", "data": "normal", "seed": i, "expect": "valid", "tier": "full", "tags": tags}
        out.append(Record(
            case_id=f"case_{i}[k={i % 3}]", file=EVIL_FILE if i % 17 == 0 else f"{op}.yaml", op=op, params=params,
            backend=backend, backend_version="1.0", device="cpu", dtype="float32", status=status,
            max_abs_err=None if ratio is None else ratio * 1e-6, rel_err=None, bound_ratio=ratio,
            diagnosis="flip_kernel" if status == "mismatch" and i % 3 == 0 else None, known_issue=known,
            known_status=["mismatch"] if known else [],
            message={"mismatch": "8/512 elements beyond the bound (border)", "crash": "worker died: SIGSEGV",
                     "unsupported": "no asymmetric padding"}.get(status, ""),
            translation=f"y = F.{op}(x, w, None, padding=1)" if status != "unsupported" else "",
            where=where_of(rank, i % 8) if status == "mismatch" else None))
    return out


def write_shard(path: Path, records: list[Record]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.jsonl").write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    (path / "summary.json").write_text(json.dumps(summarize(records, {"date": "d", "command": f"run {path.name}",
                                                                      "targets": {f"{path.name}-cpu": {}}})))
    return path / "results.jsonl"


def varied() -> list[Record]:
    """A run in the shape of make run's: many passes; a documented refusal on a quantized target (rejected,
    known), a huge known mismatch, a non-finite output, a wrong shape, a small unexpected mismatch, a crash,
    a timeout, an accepted invalid case, unsupported cases, on targets of several families."""
    base = synthetic(1, fail_every=1)[0]

    def rec(i: int, backend: str, status: str, ratio: float | None = None, known: str | None = None, **kw: Any) -> Record:
        params = {**base.params, "seed": i, "tags": ["basic"]}
        return Record(**{**base.__dict__, "case_id": f"v{i}", "file": "conv2d.yaml", "params": params,
                         "backend": backend, "status": status, "bound_ratio": ratio, "known_issue": known,
                         "known_status": [status] if known else [], "diagnosis": None, "where": None,
                         "message": kw.pop("message", f"{status} on {backend}"), **kw})

    out = [rec(i, b, "pass", 0.1) for i in range(60) for b in ("torch", "tf-xla", "paddle", "torch-ao-qnnpack")]
    out += [rec(100 + i, "torch-ao-qnnpack", "rejected", known="qnnpack_int8_refusal") for i in range(8)]
    out += [rec(120 + i, "tf-xla", "mismatch", 5.57e15 / (i + 1), known="xla_conv3d_huge") for i in range(3)]
    out += [rec(130, "paddle", "mismatch", None, nonfinite=4, message="4 non-finite output element(s) (NaN)")]
    out += [rec(131, "paddle", "shape_mismatch", known="paddle_shape")]
    out += [rec(132, "torch", "mismatch", 1.7)]
    out += [rec(133, "torch", "crash", message="worker died: SIGSEGV")]
    out += [rec(134, "tf-xla", "timeout", known="xla_slow")]
    out += [rec(135, "torch", "accepted_invalid", known="torch_accepts")]
    out += [rec(136 + i, "torch-ao-qnnpack", "unsupported", message="no float input") for i in range(5)]
    out += [rec(150, "paddle", "error", message="adapter raised")]
    return out
