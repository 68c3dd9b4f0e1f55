"""The data report.html carries for its script: a compressed index of the listed results and their
detail panels, decoded in the browser on demand.

Both are JSON, deflated (zlib, which the browser's `DecompressionStream("deflate")` reads) and base64
encoded, so the page stays one file that works offline:

- the index, decoded once the page has loaded: a string table, one row per finding group and one per
  non-pass result in page order. It is all the filters need, and all a group's member list shows;
- the detail panels (already escaped HTML from templates/detail.html.j2), in chunks of about CHUNK
  characters, each decoded the first time one of its results is opened.

The index rows (keys of `index()`):
  s   strings; every other string field is an index into it
  g   per group: [target, status, family, first result, results, unexpected results, search text,
      backend, device, op, output, why unsupported, diagnosis]; the page holds the headers of the findings,
      the script builds those of the unsupported groups (most of the groups of a run) when they are asked for,
      and the first screen's list of unexpected results as the filters narrow it
  r   per result: [file, case id, output, error/bound (3 digits, or null), flags, matrix row, tags ("|"-joined),
      message (first line)]; flags: 1 unexpected, 2 new since the baseline, 4 non-finite output, 8 an error
      the adapter's code raised, 16 an internal error of convdiff (Record.error_origin)
  c   the first result of each detail chunk
  k   status classes, {name: [statuses]} (reports.overview.CLASSES)
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Sequence
from typing import Any

from reports.model import NO_RATIO, Report
from reports.overview import CLASSES

CHUNK = 256_000  # characters of detail HTML per chunk: one chunk decodes in a few ms; fewer chunks compress better
MESSAGE = 160    # characters of a result's message the list shows (the panel has all of it)
UNSUPPORTED = 200  # characters of an unsupported group's reason its header shows
ORIGIN_FLAGS = {"adapter": 8, "convdiff": 16}  # whose an `error` is, in a result's flags


def pack(obj: Any) -> str:
    """JSON, deflated, base64: what `inflate()` in report.js reads back."""
    raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def unpack(text: str) -> Any:
    """pack's inverse (for tests and tools)."""
    return json.loads(zlib.decompress(base64.b64decode(text)).decode("utf-8"))


class _Strings:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.ids: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        i = self.ids.get(text)
        if i is None:
            i = self.ids[text] = len(self.items)
            self.items.append(text)
        return i


def _ratio(value: float) -> float | None:
    if value == NO_RATIO or not math.isfinite(value):
        return None
    return float(f"{value:.3g}")


def index(report: Report) -> dict[str, Any]:
    s = _Strings()
    groups, rows = [], []
    for f in report.findings + report.unsupported:
        search = " ".join(x for x in (f.diagnosis, f.known_issue) if x).lower()
        groups.append([s(f.target), s(f.status), s(f.family), f.members[0].key if f.members else len(rows),
                       len(f.members), f.unexpected, s(search), s(f.backend), s(f.device), s(f.op), s(f.output),
                       s((f.known_issue or "")[:UNSUPPORTED] if f.status == "unsupported" else ""),
                       s(f.diagnosis or "")])
        for m in f.members:
            r = m.rec
            flags = ((1 if r.unexpected else 0) | (2 if m.new else 0) | (4 if math.isinf(m.severity) else 0)
                     | ORIGIN_FLAGS.get(r.error_origin or "", 0))
            message = (r.message.splitlines() or [""])[0][:MESSAGE]
            rows.append([s(r.file), s(r.case_id), s(r.output), _ratio(m.severity) if f.cls == 0 else None, flags,
                         s(m.row), s("|".join(m.tags)), s(message)])
    return {"s": s.items, "g": groups, "r": rows, "c": [], "k": {key: list(st) for key, _, st in CLASSES}}


def chunked(bodies: Sequence[str], size: int = CHUNK) -> tuple[list[int], list[str]]:
    """(first result of each chunk, each chunk packed)."""
    starts: list[int] = []
    packed: list[str] = []
    i = 0
    while i < len(bodies):
        j, total = i, 0
        while j < len(bodies) and (j == i or total + len(bodies[j]) <= size):
            total += len(bodies[j])
            j += 1
        starts.append(i)
        packed.append(pack(list(bodies[i:j])))
        i = j
    return starts, packed


def payload(report: Report, bodies: Sequence[str]) -> tuple[str, str]:
    """(the packed index, the packed detail chunks one per line) for the page's two data blocks."""
    idx = index(report)
    idx["c"], chunks = chunked(bodies)
    return pack(idx), "\n".join(chunks)
