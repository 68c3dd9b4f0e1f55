"""What the report says about each known issue a result matched: the entry, where it comes from, and
what upstream knows of it.

summary.json's "known_issues" maps id -> [reason, link, file] (older summaries: [reason, link]); the
entry's `fixed_in` is read from that file when it is still there, so the upstream state reads
"none found", "reported" (with the link) or "fixed in <release>" as `KnownIssue.upstream_state` does.
Where an upstream-ready report text (`upstream/<id>.md`) or a standalone reproducer (`upstream/<id>.py`,
from which `convdiff upstream <id>` builds the report) sits beside the entry's file or in convdiff's own
cases/upstream/, the report points at it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # convdiff's tree
UPSTREAM_DIR = ROOT / "cases" / "upstream"


@dataclass
class KnownView:
    id: str
    reason: str = ""
    link: str = ""           # shown with jinja's urlize: only http(s)/www text becomes a link
    file: str = ""           # the known-issues file the entry comes from
    fixed_in: str = ""
    hits: Counter = field(default_factory=Counter)   # status -> results matched
    fixed: list[str] = field(default_factory=list)   # members that now pass
    upstream_doc: str = ""   # cases/upstream/<id>.md, where convdiff's tree has one
    reproducer: str = ""     # cases/upstream/<id>.py, where convdiff's tree has one

    @property
    def upstream_state(self) -> str:
        """none found / reported / fixed in <release> (harness.judge.known_issues.KnownIssue.upstream_state)."""
        if self.fixed_in:
            return f"fixed in {self.fixed_in}"
        if not self.link:
            return "not recorded"  # the entry's file is gone and the summary predates known_issues
        return "none found" if self.link.lower().startswith("none found") else "reported"


    @property
    def link_note(self) -> str:
        """The link field without a leading "none found" (the state already says it)."""
        if self.link.lower().startswith("none found"):
            return self.link[len("none found"):].strip(" ;:,.-")
        return self.link


def entry_info(known_info: Mapping[str, Iterable[Any]]) -> dict[str, dict[str, str]]:
    """id -> {reason, link, file, fixed_in} from summary.json's known_issues, fixed_in read from the files."""
    out: dict[str, dict[str, str]] = {}
    for kid, value in known_info.items():
        reason, link, file, *_ = [*value, "", "", ""]
        out[kid] = {"reason": str(reason or ""), "link": str(link or ""), "file": str(file or ""), "fixed_in": ""}
    for file in sorted({v["file"] for v in out.values() if v["file"]}):
        for e in _entries(file):
            if e.id in out and out[e.id]["file"] == file:
                out[e.id]["fixed_in"], out[e.id]["root"] = e.fixed_in, e.root
    return out


def load_file_info(path: Path) -> dict[str, dict[str, str]]:
    """The same from one known-issues file (an old summary records none); empty when missing or broken."""
    return {e.id: {"reason": e.reason, "link": e.link, "file": str(path), "fixed_in": e.fixed_in, "root": e.root}
            for e in _entries(str(path))}


def _entries(path: str) -> list[Any]:
    try:
        from harness.judge.known_issues import load_known_issues

        return list(load_known_issues(path).entries)
    except Exception:  # noqa: BLE001 - a broken file is reported by `run`, not here: the report still renders
        return []


def shown_path(path: str | Path) -> str:
    """A file as the page names it: relative to the working directory, or else to convdiff's tree, where
    under it (records and summaries hold absolute paths)."""
    p = Path(path)
    if not p.is_absolute():
        return str(path)
    for base in (Path.cwd(), ROOT):
        if p.is_relative_to(base):
            return str(p.relative_to(base))
    return str(path)


def upstream_files(kid: str, file: str = "") -> tuple[str, str]:
    """(report text, reproducer script) for an id where they exist, else '': `upstream/<id>.md` and
    `upstream/<id>.py` beside the entry's known-issues file (where `convdiff upstream` looks), then in
    convdiff's own cases/upstream/. Paths are shown relative to the working directory where under it."""
    if not kid or "/" in kid or kid.startswith("."):
        return "", ""
    dirs = [*([Path(file).parent / "upstream"] if file else []), UPSTREAM_DIR]
    found = []
    for suffix in (".md", ".py"):
        hit = next((d / f"{kid}{suffix}" for d in dirs if (d / f"{kid}{suffix}").is_file()), None)
        found.append(shown_path(hit.resolve()) if hit is not None else "")
    return found[0], found[1]


def known_views(hits: dict[str, Counter], fixed: dict[str, list[str]], files: dict[str, str],
                info: dict[str, dict[str, str]]) -> dict[str, KnownView]:
    """One view per id some result matched. `files`: id -> the file named by its records (known_issue_file)."""
    out = {}
    for kid in sorted(hits):
        i = info.get(kid, {})
        file = files.get(kid) or i.get("file", "")
        doc, script = upstream_files(i.get("root") or kid, file)  # one report per root cause
        out[kid] = KnownView(kid, i.get("reason", ""), i.get("link", ""), shown_path(file) if file else "",
                             i.get("fixed_in", ""), hits[kid], fixed.get(kid, []), doc, script)
    return out
