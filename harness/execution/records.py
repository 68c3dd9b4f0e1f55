"""Result records (one JSON object per line of results.jsonl) and the streaming writer."""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

# within_bound: a relation record (output relation:<name>) whose two computations differ, all within the bound
STATUSES = ("pass", "within_bound", "mismatch", "shape_mismatch", "unsupported", "rejected",
            "accepted_invalid", "error", "crash", "timeout")
FAILING = frozenset(STATUSES) - {"pass", "within_bound", "unsupported"}


@dataclass
class Record:
    case_id: str
    file: str
    op: str
    params: dict[str, Any]
    backend: str
    backend_version: str
    device: str
    dtype: str
    status: str
    output: str = "out"   # out | grad_input | grad_weight | grad_bias (old results.jsonl: out)
    max_abs_err: float | None = None
    rel_err: float | None = None
    bound_ratio: float | None = None
    diagnosis: str | None = None
    known_issue: str | None = None
    message: str = ""
    duration_s: float = 0.0
    # beyond the contract's fields: for reports and reproducers
    translation: str = ""
    where: dict[str, Any] | None = None
    known_status: list[str] = field(default_factory=list)
    known_issue_file: str | None = None  # the known-issues file the matching entry comes from
    nonfinite: int = 0  # output elements NaN or inf where the reference is finite (rel_err covers the rest)
    # a relation record's comparisons (harness/judge/relations.py): {"pairs": [...], "subnormal": {...}}
    relation: dict[str, Any] | None = None
    path: str = ""  # which of the adapter's routes ran (backends.base.Output.path); "" for its direct call
    load: float | None = None  # a timeout's: the machine's 1-minute load average when it was called (after one retry)
    # an `error`'s: "adapter" (the adapter's code raised) or "convdiff" (an internal failure); None otherwise
    error_origin: str | None = None

    @property
    def error_size(self) -> float | None:
        """How large a mismatch is, for a known issue's max_rel_err: its rel_err, infinite when any output
        element is non-finite, None when no value was compared (e.g. a wrong dtype)."""
        if self.status != "mismatch":
            return None
        return math.inf if self.nonfinite else self.rel_err

    @property
    def unexpected(self) -> bool:
        """A failing status not explained by a known issue."""
        return self.status in FAILING and not (self.known_issue and self.status in self.known_status)

    @property
    def fixed_upstream(self) -> bool:
        """A known issue that now passes, unless the entry says passing is one of its outcomes (`pass` covers a
        relation that holds within the bound, `within_bound`, as well as bitwise)."""
        return (bool(self.known_issue) and self.status in ("pass", "within_bound") and self.status not in self.known_status
                and not (self.status == "within_bound" and "pass" in self.known_status))

    def to_json(self) -> str:
        """Strict JSON (readable by jq and JSON.parse): non-finite numbers become null.

        A shallow view of the fields, no deep copy (dataclasses.asdict copies every nested
        list); the rare record holding a NaN or an infinity is cleaned on a second try.
        """
        view = {name: getattr(self, name) for name in _FIELDS}
        try:
            return json.dumps(view, separators=(",", ":"), allow_nan=False)
        except ValueError:
            return json.dumps(_finite(view), separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, line: str) -> Record:
        d = json.loads(line)
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


_FIELDS = tuple(f.name for f in fields(Record))


def _finite(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_finite(x) for x in v]
    return v


class JsonlSink:
    """Appends records as they are produced, in whole lines.

    Lines are written in batches: when FLUSH_S has passed since the last write (checked at
    each record and by a timer, so a quiet stretch still reaches the disk) and at close. A
    framework crash costs nothing here (workers die, the controller keeps writing); a killed
    controller loses at most the last FLUSH_S of results, never a partial line.
    """

    FLUSH_S = 0.5

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.lock = threading.Lock()
        self.pending: list[str] = []
        self.last = time.monotonic()
        self.closed = threading.Event()
        self.timer = threading.Thread(target=self._tick, daemon=True, name="jsonl-flush")
        self.timer.start()

    def __call__(self, record: Record) -> None:
        line = record.to_json() + "\n"
        with self.lock:
            self.pending.append(line)
            if time.monotonic() - self.last >= self.FLUSH_S:
                self._flush()

    def _flush(self) -> None:  # holding the lock
        if self.pending:
            self.fh.write("".join(self.pending))
            self.fh.flush()
            self.pending.clear()
        self.last = time.monotonic()

    def _tick(self) -> None:
        while not self.closed.wait(self.FLUSH_S):
            with self.lock:
                if not self.fh.closed:
                    self._flush()

    def close(self) -> None:
        self.closed.set()
        with self.lock:
            if not self.fh.closed:
                self._flush()
                self.fh.close()


def read_records(paths: list[Path]) -> list[Record]:
    out: list[Record] = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            out.extend(Record.from_json(line) for line in fh if line.strip())
    return out
