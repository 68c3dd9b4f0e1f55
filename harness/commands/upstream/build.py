"""entry -> witness run -> snippet -> body -> details: one root cause's report, assembled in that order.

The entry (the root's primary one, and its fellow symptoms) gives the kind, the tracker, the component, the
links, what was searched and the newest release checked; the witness run (witness.py, done for several roots
at once by the caller) gives what the other implementations do; the snippet `<root>.py` gives the title, the
prose, the code and, run here, its output; its settings select the environment read live from the tracker's
framework (environment.py); the full checks run for the details, with the scope tested on fresh cases where one
is stored (scope_rule.py).
"""

from __future__ import annotations

import re

from harness.commands.upstream.environment import TRACKERS, facts_for
from harness.commands.upstream.scope_rule import stored
from harness.commands.upstream.scripts import distributions, run_check, run_snippet, settings_of
from harness.commands.upstream.subjects import Root
from harness.commands.upstream.tracker_blocks import tracker_blocks
from harness.commands.upstream.witness import Witness
from harness.judge.known_issues import KnownIssue
from reports.upstream.docstring import Snippet, parse_snippet
from reports.upstream.environment import environment_block
from reports.upstream.model import Others, Report, ScriptRun

PROSE = ("What happens", "Expected", "Mechanism")
LATEST_PACKAGE = {"pytorch/executorch": "executorch", "pytorch/ao": "torchao"}  # else the tracker's first distribution
FROM_SNIPPET = {"openxla/xla"}  # reached through TensorFlow or JAX: the framework the snippet imports
_URL = re.compile(r"https?://[^\s)\]]+[^\s.,;:)\]]")


def tracker_of(root: Root) -> str:
    """The tracker the report is filed on: the primary entry's, else the owner/repo of its first GitHub link."""
    entry = root.primary
    if entry is None:
        return ""
    if entry.tracker:
        return entry.tracker
    m = re.search(r"https://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/", entry.link)
    return m.group(1) if m else ""


def package_of(root: Root, source: str = "") -> str:
    """The distribution whose newest release `--latest` checks: the tracker's framework, else the snippet's
    first third-party import other than NumPy."""
    tracker = tracker_of(root)
    if tracker in LATEST_PACKAGE:
        return LATEST_PACKAGE[tracker]
    if tracker in TRACKERS and tracker not in FROM_SNIPPET:
        return TRACKERS[tracker][1][0]
    return next((d for d in distributions(source) if d != "numpy"), "")


def links(entries: list[KnownIssue]) -> list[str]:
    """The URLs of the entries' links (each once), then each component's tracker."""
    found = list(dict.fromkeys(u for e in entries for u in _URL.findall(e.link)))
    for e in entries:
        c = e.component
        if c is not None and f"{c.name}: {c.tracker_url}" not in found:
            found.append(f"{c.name}: {c.tracker_url}")  # where it lives in the component: the details
    return found


def _prose(root: Root, snip: Snippet | None) -> list[tuple[str, str]]:
    if snip is not None and snip.sections:
        return [(label, snip.sections[label]) for label in PROSE if snip.sections.get(label)]
    entry = root.primary
    return [("What happens", entry.reason)] if entry is not None else []


def build(root: Root, run: bool, timeout: float, others: Others | None = None, witness: Witness | None = None) -> Report:
    """The report of one root: the snippet run here when `run` (else 'not run'), its checks too; `witness`:
    the case the blocks a tracker asks for are made from (tracker_blocks.py)."""
    path = root.snippet
    source = path.read_text(encoding="utf-8") if path is not None else ""
    snip = parse_snippet(source) if source else None
    entry = root.primary
    settings = settings_of(source)
    tracker = tracker_of(root)
    kind = (snip.kind if snip is not None and snip.kind else "") or (entry.kind if entry else "")
    if not run:
        result = ScriptRun(note="--no-run")
    elif path is None:
        result = ScriptRun(note="no snippet yet")
    elif snip is not None and snip.legacy:
        result = run_check(path, timeout)  # an older script: it expects its folder and this environment
    else:
        result = run_snippet(source, timeout)
    package = package_of(root, source)
    latest = entry.latest.sentence(package) if entry is not None and entry.latest is not None else ""
    latest_short = entry.latest.short(package) if entry is not None and entry.latest is not None else ""
    facts = facts_for(tracker, settings, tuple(distributions(source)), run)
    tested = stored(root)  # the scope inferred and tested on fresh cases (scope_rule.py); nothing where none is
    checks = [(f"{p.parent.name}/{p.name}" if p.parent.name == "checks" else p.name,
               run_check(p, timeout) if run else ScriptRun(note="--no-run")) for p in root.checks()]
    return Report(
        root=root.id, title=(snip.title if snip is not None and snip.title else root.id), kind=kind, tracker=tracker,
        prose=_prose(root, snip), code=snip.code if snip is not None else "", snippet_name=f"{root.id}.py",
        run=result, environment=environment_block(tracker, facts, latest), symptoms=snip.symptoms if snip else [],
        extra=tracker_blocks(tracker, witness, timeout) if run else [],
        others=others, ask=(snip.ask if snip is not None and snip.ask else "") or (entry.asks if entry else ""),
        latest=latest, latest_short=latest_short, links=links(root.entries), checks=checks,
        scope=[tested.sentence()] if tested is not None and tested.sentence() else [],
        legacy=bool(snip is not None and snip.legacy), entries=[e.id for e in root.entries],
        searched=list(dict.fromkeys(s for e in root.entries for s in e.searched)),
        components=list(dict.fromkeys(f"{e.component.name}: {e.component.where}" for e in root.entries
                                      if e.component is not None and e.component.where)))
