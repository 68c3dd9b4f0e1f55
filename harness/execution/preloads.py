"""What each backend's zygote template imports, and which template a template is forked from
(harness/execution/zygote.py)."""

from __future__ import annotations

import functools
import itertools

from harness.execution import shared
from harness.execution.zygote import Zygote, zygote_for

_GRADIENTS = [True]  # whether this process's runs differentiate (for_gradients)


def for_gradients(wanted: bool) -> None:
    """Whether the templates this process starts from now on import `Backend.gradient_preload` too: yes by
    default (pytest, scope, fuzz), no for a `convdiff run` without `--gradients` (its first verdict comes
    sooner; a gradient case it meets all the same imports them in its worker). Decided before the first
    template starts, from the command line alone, so that every call in the run agrees on each template."""
    _GRADIENTS[0] = wanted


def preload(backend: str) -> tuple[str, ...]:
    """What a zygote imports for this backend, in order: its framework (the adapter's own module name for
    it; where `Backend.preload` names it, at that place instead), then the other heavy modules its run()
    imports (`Backend.preload`), then, where this process's runs differentiate, `Backend.gradient_preload`;
    first, as "-name", the packages it must not import (`Backend.excludes`, blocked before any import:
    worker.block)."""
    from backends.registry import get_backend

    try:
        adapter = get_backend(backend)
    except Exception:  # noqa: BLE001 - an unknown name starts fresh and reports itself
        return ()
    blocked = tuple(f"-{m}" for m in adapter.excludes)
    first = () if adapter.framework in adapter.preload else (adapter.framework,)
    later = adapter.gradient_preload if _GRADIENTS[0] else ()
    return blocked + tuple(dict.fromkeys(m for m in (*first, *adapter.preload, *later) if m))


def templates() -> list[tuple[str, ...]]:
    """What every installed backend's zygote imports: a zygote whose modules begin with another's, in order,
    is forked from that one and imports only the rest (zygote.parent_of)."""
    return [preload(b) for b in _installed()]


@functools.cache
def _installed() -> tuple[str, ...]:
    from backends.registry import installed_backends

    return tuple(installed_backends())


def run_templates(backends: list[str]) -> list[tuple[str, ...]]:
    """The templates a run of these backends may fork from: their own, and the longest that two of them begin
    with in common (torch-inductor's and torch-onnx-ort's begin with torch's), so that a run of one backend
    reads no other adapter (templates() imports every installed one: ~0.15 CPU-s of a small run's start)."""
    own = list(dict.fromkeys(preload(b) for b in backends))
    shared_starts = [common_start(a, b) for a, b in itertools.combinations(own, 2)]
    return own + [t for t in dict.fromkeys(shared_starts) if any(not m.startswith("-") for m in t)]


def common_start(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def zygote_of(backend: str, among: list[str] | None = None) -> Zygote | None:
    """The zygote this backend's workers fork from (started on first use), or None. `among`: the backends of
    the run that starts it; outside an xdist session, only their templates are candidates to fork from
    (run_templates); in one, every installed backend's, which the session's processes share."""
    candidates = templates() if among is None or shared.directory() is not None else run_templates(among)
    return zygote_for(preload(backend), candidates)


def prestart(backends: list[str]) -> None:
    """Start the zygotes these backends will fork from, side by side, before any worker waits on one."""
    for backend in backends:
        zygote_of(backend, among=backends)
