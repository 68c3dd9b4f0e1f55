"""A known issue's upstream fields: what kind of defect it is, which report it belongs to, where it lives.

Each is optional in the schema; every entry that has an upstream report carries `kind` and `root`.

- `kind`: what the report asks for follows from it (KINDS: a fix, an error, documentation, a feature).
- `root`: the id of the root cause the entry is a symptom of (default: the entry's own id). Entries that
  share a root make one report, `cases/upstream/<root>.md`.
- `component`: `{name, tracker, where}`, the vendored component the defect lives in (oneDNN, XNNPACK,
  Eigen, torch-mlir, MLIR, MKL) and its tracker: a GitHub `owner/repo`, or a URL where it is elsewhere.
- `searched`: `owner/repo: what was searched`, one string per search, as of `checked.date`.
- `latest`: `{version, result, date, note}`, the snippet run against the newest release of the
  framework on the package index (`convdiff upstream ID --latest`); result is shows, fixed or not-run.
- `ask`: one sentence that overrides the ask derived from the kind.

Problems are input errors, `path:line: field: problem`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness.model.yamlmap import InputError, LineMap

KINDS: dict[str, str] = {  # kind -> the ask a report makes when the entry states none
    "wrong-value": "a fix",
    "crash": "a fix",
    "valid-refused": "support for this input, or an error that names the limitation",
    "invalid-accepted": "an error for this input",
    "by-design-undocumented": "documentation of this behaviour, or a warning",
    "by-design-documented": "",  # the framework documents it (or a spec declares it): recorded for users, no report
}
LATEST_RESULTS = ("shows", "fixed", "not-run")
UPSTREAM_FIELDS = ("kind", "root", "component", "searched", "latest", "ask")

_REPO = r"[\w.-]+/[\w.-]+"
_ID = r"[a-z0-9][a-z0-9._-]*"
_DATE = r"\d{4}-\d{2}-\d{2}"
_WHERE = r"(?:[\w.-]+/)+[\w.-]+"  # a tracker: owner/repo, or host/owner/repo


@dataclass(frozen=True)
class Component:
    """A component the framework vendors, where the defect lives (oneDNN, XNNPACK, Eigen, ...)."""

    name: str
    tracker: str  # GitHub owner/repo, or a URL for a tracker elsewhere (Eigen's GitLab)
    where: str = ""  # the kernel or file and the vendored version, e.g. "brg_conv_fwd:avx512_core, oneDNN v3.6.2"

    @property
    def tracker_url(self) -> str:
        return self.tracker if "://" in self.tracker else f"https://github.com/{self.tracker}/issues"


@dataclass(frozen=True)
class Latest:
    """The snippet run against the newest release on the package index."""

    version: str
    result: str  # shows | fixed | not-run
    date: str
    note: str = ""

    def short(self, package: str) -> str:
        """'still shows in torch 2.14.1' / 'fixed in ...' / 'not run against ...'."""
        head = {"shows": "still shows in", "fixed": "fixed in", "not-run": "not run against"}[self.result]
        return f"{head} {package} {self.version}"

    def sentence(self, package: str) -> str:
        """short(), with the date and the note."""
        return f"{self.short(package)} ({self.date}{'; ' + self.note if self.note else ''})"


def _where(raw: LineMap, key: str, sub: Any = None, subkey: str | None = None) -> int:
    if isinstance(sub, LineMap) and subkey in sub.lines:
        return sub.lines[subkey]
    return raw.lines.get(key, raw.line)


def _mapping(path: str, raw: LineMap, key: str, required: tuple[str, ...], optional: tuple[str, ...]) -> dict | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(path, _where(raw, key), key, f"must be a mapping with {', '.join(required)}")
    for k in value:
        if k not in required + optional:
            raise InputError(path, _where(raw, key, value, k), f"{key}.{k}",
                             f"unknown field (known: {', '.join(required + optional)})")
    for k in required:
        if value.get(k) in (None, ""):
            raise InputError(path, _where(raw, key), f"{key}.{k}", "required field is missing")
    return value


def load_upstream_fields(path: str, raw: LineMap) -> dict[str, Any]:
    """The KnownIssue keyword arguments for kind, root, component, searched, latest and ask (validated)."""
    out: dict[str, Any] = {}
    kind = raw.get("kind")
    if kind is not None and str(kind) not in KINDS:
        raise InputError(path, _where(raw, "kind"), "kind", f"unknown kind '{kind}' (known: {', '.join(KINDS)})")
    out["kind"] = str(kind or "")
    root = raw.get("root")
    if root is not None and not re.fullmatch(_ID, str(root)):
        raise InputError(path, _where(raw, "root"), "root", "must be an id such as keras-ops-add-axis-guess")
    out["root"] = str(root or raw.get("id") or "")
    comp = _mapping(path, raw, "component", ("name", "tracker"), ("where",))
    if comp is not None:
        tracker = str(comp["tracker"])
        if not (re.fullmatch(_REPO, tracker) or re.fullmatch(r"https?://\S+", tracker)):
            raise InputError(path, _where(raw, "component", comp, "tracker"), "component.tracker",
                             "must be a GitHub owner/repo (uxlfoundation/oneDNN) or the tracker's URL")
        out["component"] = Component(str(comp["name"]), tracker, str(comp.get("where") or ""))
    searched = raw.get("searched")
    if searched is not None:
        if not isinstance(searched, list) or not searched:
            raise InputError(path, _where(raw, "searched"), "searched", "must be a non-empty list of strings")
        lines = getattr(searched, "lines", [])
        for i, item in enumerate(searched):
            if not isinstance(item, str) or not re.match(rf"{_WHERE}(?:(?:,| and) {_WHERE})*: \S", item):
                raise InputError(path, lines[i] if i < len(lines) else _where(raw, "searched"), f"searched[{i}]",
                                 "must read 'owner/repo: what was searched' (several trackers: 'a/b and c/d: ...')")
        out["searched"] = tuple(searched)
    latest = _mapping(path, raw, "latest", ("version", "result", "date"), ("note",))
    if latest is not None:
        if str(latest["result"]) not in LATEST_RESULTS:
            raise InputError(path, _where(raw, "latest", latest, "result"), "latest.result",
                             f"unknown result '{latest['result']}' (known: {', '.join(LATEST_RESULTS)})")
        if not re.fullmatch(_DATE, str(latest["date"])):
            raise InputError(path, _where(raw, "latest", latest, "date"), "latest.date", "must be YYYY-MM-DD")
        out["latest"] = Latest(str(latest["version"]), str(latest["result"]), str(latest["date"]),
                               str(latest.get("note") or ""))
    ask = raw.get("ask")
    if ask is not None and (not isinstance(ask, str) or not ask.strip()):
        raise InputError(path, _where(raw, "ask"), "ask", "must be one sentence")
    out["ask"] = str(ask or "")
    return out
