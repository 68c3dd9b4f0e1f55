"""Which report an id names: one per root cause (entries sharing a `root`), with its snippet and checks.

A root's files live in the `upstream/` folder beside its entries' known-issues file: the snippet
`<root>.py`, the generated report `<root>.md`, and the full checks `checks/<id>.py` of its entries. A script
in that folder whose name is no root (an older script named after an entry that now shares another root, or
one with no entry at all) is still a subject of `--check`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.judge.known_issues import KnownIssue, KnownIssues, project_known_issues


class UpstreamUsage(Exception):
    """Bad input: one line, exit status 2."""


@dataclass
class Root:
    """One root cause: its id, its entries in file order, and its folder."""

    id: str
    entries: list[KnownIssue] = field(default_factory=list)
    folder: Path | None = None

    @property
    def primary(self) -> KnownIssue | None:
        """The entry whose id is the root's, else the first: the one the snippet's exit contract follows."""
        return next((e for e in self.entries if e.id == self.id), self.entries[0] if self.entries else None)

    @property
    def snippet(self) -> Path | None:
        path = self.folder / f"{self.id}.py" if self.folder is not None else None
        return path if path is not None and path.is_file() else None

    def checks(self) -> list[Path]:
        """checks/<id>.py of each entry that has one; an older script named after a member entry too."""
        if self.folder is None:
            return []
        found = [self.folder / "checks" / f"{e.id}.py" for e in self.entries]
        found += [self.folder / f"{e.id}.py" for e in self.entries if e.id != self.id]
        return [p for p in found if p.is_file()]


def folder_of(entry: KnownIssue | None) -> Path | None:
    """`upstream/` beside the entry's known-issues file (convdiff's own where the entry has no file)."""
    source = entry.source if entry is not None and entry.source else project_known_issues()
    return None if source is None else Path(source).parent / "upstream"


def roots(known: KnownIssues) -> dict[str, Root]:
    """Every root of the database, its entries in file order (the first file's entries win a clash of ids)."""
    out: dict[str, Root] = {}
    seen: set[str] = set()
    for e in known.entries:
        if e.id in seen:
            continue
        seen.add(e.id)
        root = out.setdefault(e.root, Root(e.root, folder=folder_of(e)))
        root.entries.append(e)
    return out


def resolve(ident: str, known: KnownIssues) -> Root:
    """The root an id names: a root id, an entry's id (its root), or a script's name in an upstream/ folder."""
    all_roots = roots(known)
    if ident in all_roots:
        return all_roots[ident]
    entry = next((e for e in known.entries if e.id == ident), None)
    if entry is not None:
        return all_roots[entry.root]
    for folder in folders(known):
        if (folder / f"{ident}.py").is_file():
            return Root(ident, [], folder)
    raise UpstreamUsage(f"no known issue or root '{ident}' in {', '.join(known.sources) or 'any known-issues file'}, "
                        "and no script of that name in cases/upstream/")


def folders(known: KnownIssues) -> list[Path]:
    sources = [*known.sources, str(project_known_issues() or "")]
    return list(dict.fromkeys(Path(s).parent / "upstream" for s in sources if s))


def with_reports(known: KnownIssues) -> list[Root]:
    """The roots that have a snippet (so a report), then the scripts of those folders that belong to no root."""
    all_roots = roots(known)
    chosen = [r for r in all_roots.values() if r.snippet is not None]
    named = {r.id for r in chosen} | {e.id for r in all_roots.values() for e in r.entries}
    for folder in folders(known):
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            if path.stem not in named:
                chosen.append(Root(path.stem, [], folder))
                named.add(path.stem)
    return sorted(chosen, key=lambda r: r.id)


def tally(known: KnownIssues) -> str:
    """How many reports the database makes against how many entries."""
    all_roots = roots(known)
    reported = [r for r in all_roots.values() if r.snippet is not None]
    covered = sum(len(r.entries) for r in reported)
    shared = sum(1 for r in all_roots.values() if len(r.entries) > 1)
    return (f"{len(known.entries)} entries make {len(all_roots)} root causes ({shared} shared by several entries); "
            f"{len(reported)} reports in cases/upstream/ cover {covered} entries")
