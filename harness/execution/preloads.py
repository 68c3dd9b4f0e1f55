"""What each backend's zygote template imports, and which template a template is forked from
(harness/execution/zygote.py)."""

from __future__ import annotations

import functools

from harness.execution.zygote import Zygote, zygote_for


def preload(backend: str) -> tuple[str, ...]:
    """What a zygote imports for this backend, in order: its framework (the adapter's own module name for
    it; where `Backend.preload` names it, at that place instead), then the other heavy modules its run()
    imports (`Backend.preload`); first, as "-name", the packages it must not import (`Backend.excludes`,
    blocked before any import: worker.block)."""
    from backends.registry import get_backend

    try:
        adapter = get_backend(backend)
    except Exception:  # noqa: BLE001 - an unknown name starts fresh and reports itself
        return ()
    blocked = tuple(f"-{m}" for m in adapter.excludes)
    first = () if adapter.framework in adapter.preload else (adapter.framework,)
    return blocked + tuple(dict.fromkeys(m for m in (*first, *adapter.preload) if m))


def templates() -> list[tuple[str, ...]]:
    """What every installed backend's zygote imports: a zygote whose modules begin with another's, in order,
    is forked from that one and imports only the rest (zygote.parent_of)."""
    return [preload(b) for b in _installed()]


@functools.cache
def _installed() -> tuple[str, ...]:
    from backends.registry import installed_backends

    return tuple(installed_backends())


def zygote_of(backend: str) -> Zygote | None:
    """The zygote this backend's workers fork from (started on first use), or None."""
    return zygote_for(preload(backend), templates())
