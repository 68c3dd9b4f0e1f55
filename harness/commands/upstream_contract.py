"""Whether a known issue applies on this host, from the live host facts its backends' frameworks report.

The exit-status contract of cases/upstream/README.md: a reproducer exits 1 where its entry applies (its `host:`
selector matches what a worker of one of its installed backends reads live from the framework, merged with the
machine's CPU facts as `convdiff run` matches them, or it has no selector; and `pass` is not among its outcomes),
0 or 1 elsewhere. Used by `convdiff upstream` (harness/commands/upstream.py) and tests/test_upstream.py.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
from typing import Any

from backends.registry import get_backend, real_backends
from harness.execution.host import cpu_facts, merged
from harness.judge.known_issues import KnownIssue
from reports.upstream import fmt


def entry_backends(entry: KnownIssue) -> list[str]:
    """The registered backends the entry names (globs expanded), installed ones first, in the entry's order."""
    names = list(dict.fromkeys(b for pattern in entry.backend for b in real_backends() if fnmatch.fnmatchcase(b, pattern)))
    return sorted(names, key=lambda b: not installed(b))


@functools.cache
def installed(backend: str) -> bool:
    return get_backend(backend).unavailable_reason() is None


class LiveFacts:
    """The host facts each backend's framework reports, read live from a CPU worker (one per backend and
    process, handed to the warm pool where one is kept: the pytest plugin's)."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Any] | None] = {}

    def of(self, backend: str) -> dict[str, Any] | None:
        """That backend's facts, or None when its worker cannot start here."""
        if backend not in self.seen:
            from harness.execution.pool import Worker
            from harness.execution.warm_pool import POOL, release

            worker = POOL.take(backend, "cpu") or Worker(backend, "cpu")
            self.seen[backend] = dict(worker.host) if worker.ready() else None
            release([worker])
        return self.seen[backend]


@dataclasses.dataclass(frozen=True)
class Contract:
    """What the exit-status contract asks of an entry's script on this host: {1} where the entry applies
    (its host selector matches, or it has none, and `pass` is not among its outcomes), else {0, 1}."""

    exits: frozenset[int]
    why: str
    facts: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # backend -> live facts read


def contract(entry: KnownIssue | None, live: LiveFacts | None) -> Contract:
    either = frozenset({0, 1})
    if entry is None:
        return Contract(either, "no known-issue entry")
    if "pass" in entry.status:
        return Contract(either, "the entry lists pass among its outcomes")
    if entry.device and "cpu" not in entry.device:
        from harness.execution.pool import gpu_present

        if not gpu_present():
            return Contract(either, f"the entry is for {', '.join(entry.device)} only, and this host has no GPU")
    if not entry.host:
        return Contract(frozenset({1}), "applies: the entry selects on no host fact")
    backends = [b for b in entry_backends(entry) if installed(b)]
    if live is None or not backends:
        return Contract(either, "host facts not read" if backends else "none of its backends is installed")
    read: dict[str, dict[str, Any]] = {}
    for backend in backends:
        facts = live.of(backend)
        if facts is None:
            continue
        read[backend] = facts
        if entry.host_matches(merged(cpu_facts(), facts)):
            return Contract(frozenset({1}), f"applies: {backend} reports {_shown(entry, facts)}", read)
    if not read:
        return Contract(either, "no worker of its backends started here")
    backend, facts = next(iter(read.items()))
    return Contract(either, f"does not apply: {backend} reports {_shown(entry, facts)}", read)


def _shown(entry: KnownIssue, facts: dict[str, Any]) -> str:
    """The facts the entry selects on, as this host has them (a flag list: just the flags it names)."""
    have = merged(cpu_facts(), facts)
    parts = []
    for key, want in entry.host.items():
        value = have.get(key, "not reported")
        if isinstance(want, dict) and isinstance(value, list) and ("has" in want or "lacks" in want):
            named = [f for k in ("has", "lacks") for f in (want[k] if isinstance(want.get(k), list) else [want.get(k)])
                     if f is not None]
            parts += [f"{key} {'has' if f in value else 'lacks'} {f}" for f in named]
        else:
            parts.append(f"{key}={fmt(value)}")
    return ", ".join(parts)


def with_backend_facts(entry: KnownIssue | None, terms: Contract, live: LiveFacts | None,
                       backend: str | None = None) -> Contract:
    """The contract with the live facts of the entry's backend (`backend`, else its first installed one) added
    where deciding it read none: a report states them whether or not the entry selects on them."""
    if terms.facts or live is None or entry is None:
        return terms
    backend = backend or next((b for b in entry_backends(entry) if installed(b)), None)
    facts = live.of(backend) if backend is not None and installed(backend) else None
    return dataclasses.replace(terms, facts={backend: facts}) if facts is not None else terms
