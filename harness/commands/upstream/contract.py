"""Whether a known issue applies on this host, from the host facts its backends' frameworks report live.

The exit contract (cases/upstream/README.md): a snippet or check exits 1 where its entry applies (its `host:`
selector matches what a CPU worker of one of its installed backends reads from the framework under the
settings the script makes, merged with the machine's CPU facts as `convdiff run` matches them, or it has no
selector; `pass` is not among its outcomes; its device is here), 0 or 1 elsewhere; never a traceback; a
death by signal only for `kind: crash`.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
from typing import Any

from backends.registry import get_backend, real_backends
from harness.commands.upstream.scripts import environ
from harness.execution.host import cpu_facts, merged
from harness.judge.known_issues import KnownIssue


def entry_backends(entry: KnownIssue) -> list[str]:
    """The registered backends the entry names (globs expanded; a test double such as mutant:flip_kernel by its
    exact name), installed ones first, in the entry's order."""
    names = list(dict.fromkeys(b for pattern in entry.backend for b in [*real_backends(), pattern]
                               if fnmatch.fnmatchcase(b, pattern) and not any(c in b for c in "*?[")))
    return sorted(names, key=lambda b: not installed(b))


@functools.cache
def installed(backend: str) -> bool:
    try:
        return get_backend(backend).unavailable_reason() is None
    except Exception:  # noqa: BLE001 - a name no registry knows is not installed here
        return False


class LiveFacts:
    """The host facts each backend's framework reports, read live from a CPU worker started under the given
    settings (one per backend and settings; without settings, from the warm pool where one is kept)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, tuple], dict[str, Any] | None] = {}

    def of(self, backend: str, settings: dict[str, str] | None = None) -> dict[str, Any] | None:
        key = (backend, tuple(sorted((settings or {}).items())))
        if key not in self.seen:
            from harness.execution.pool import Worker
            from harness.execution.warm_pool import POOL, release

            with environ(settings or {}):
                worker = (None if settings else POOL.take(backend, "cpu")) or Worker(backend, "cpu")
                self.seen[key] = dict(worker.host) if worker.ready() else None
            if settings:
                worker.stop()
            else:
                release([worker])
        return self.seen[key]


@dataclasses.dataclass(frozen=True)
class Contract:
    """What the exit contract asks of a script here: {1} where its entry applies, else {0, 1}; a death by
    signal is allowed for kind crash (`signal_ok`)."""

    exits: frozenset[int]
    why: str
    facts: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # backend -> live facts read
    signal_ok: bool = False

    def holds(self, exit: int | None, traceback: bool) -> bool:
        if exit is None or traceback:
            return False
        return exit in self.exits or (self.signal_ok and exit < 0)


def contract(entry: KnownIssue | None, live: LiveFacts | None, settings: dict[str, str] | None = None,
             kind: str = "") -> Contract:
    """`kind`: the kind the script demonstrates (a snippet's Kind:), where it differs from the entry's."""
    either = frozenset({0, 1})
    crash = (kind or (entry.kind if entry is not None else "")) == "crash"
    if entry is None:
        return Contract(either, "no known-issue entry")
    if "pass" in entry.status:
        return Contract(either, "the entry lists pass among its outcomes", signal_ok=crash)
    if entry.device and "cpu" not in entry.device:
        from harness.execution.host import gpu_present

        if not gpu_present():
            return Contract(either, f"the entry is for {', '.join(entry.device)} only, and this host has no GPU")
    if not entry.host:
        return Contract(frozenset({1}), "applies: the entry selects on no host fact", signal_ok=crash)
    backends = [b for b in entry_backends(entry) if installed(b)]
    if live is None or not backends:
        return Contract(either, "host facts not read" if backends else "none of its backends is installed",
                        signal_ok=crash)
    read: dict[str, dict[str, Any]] = {}
    under = f" under {', '.join(f'{k}={v}' for k, v in settings.items())}" if settings else ""
    for backend in backends:
        facts = live.of(backend, settings)
        if facts is None:
            continue
        read[backend] = facts
        if entry.host_matches(merged(cpu_facts(), facts)):
            return Contract(frozenset({1}), f"applies: {backend} reports {shown(entry, facts)}{under}", read, crash)
    if not read:
        return Contract(either, "no worker of its backends started here", signal_ok=crash)
    backend, facts = next(iter(read.items()))
    return Contract(either, f"does not apply: {backend} reports {shown(entry, facts)}{under}", read, crash)


def shown(entry: KnownIssue, facts: dict[str, Any]) -> str:
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
            parts.append(f"{key}={value}")
    return ", ".join(parts)
