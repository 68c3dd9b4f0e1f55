"""`convdiff backends`: every registered backend, where it comes from, its version, and whether it runs here:
from metadata by default, from live workers with --live."""

from __future__ import annotations

import argparse

from backends.base import Backend
from backends.registry import clashes, get_backend, installed_backends, parse_backends, real_backends, registered
from harness.execution.host import describe_host


def cmd_backends(args: argparse.Namespace, argv: list[str]) -> int:
    """List the backends: from metadata by default (entry points, distribution versions, find_spec: a second
    or two), or, with --live, from a worker started per backend and device (the version the framework reports,
    its devices, its host facts, and why setup fails: a minute or two, as every framework is imported)."""
    names = parse_backends(args.backends) if args.backends else real_backends()
    if args.probe:
        from harness.commands.probe.cells import probe_command

        return probe_command(names if args.backends else installed_backends(), args.json)
    if args.capabilities:
        from harness.commands.probe.capabilities import capability_table

        print(capability_table(names))
        return 0
    print(describe_host())
    for line in clashes():
        print(f"warning: {line}")
    regs = registered()
    broken = 0
    for name in names:
        backend = get_backend(name)
        reg = regs.get(name)
        source = f"{reg.source} {reg.source_version}".strip() if reg else "convdiff (test-only)"
        reason = backend.unavailable_reason()
        if reason:
            print(f"{name:<30} {'-':<16} [{source}] unavailable: {reason}")
            continue
        if not args.live:
            devices = ", ".join(backend.capabilities.devices)
            print(f"{name:<30} {backend.version():<16} [{source}] installed; declares {devices}")
            continue
        found, version = _live(name, backend)
        broken += found.count("BROKEN")
        print(f"{name:<30} {version:<16} [{source}] " + "; ".join(found))
    if not args.live:
        print("(from metadata, no framework imported; --live starts each worker: the version it reports, the "
              "devices usable here, host facts, setup errors)")
    return 1 if broken else 0


def _live(name: str, backend: Backend) -> tuple[list[str], str]:
    """Start a worker per declared device: (one `device: state (facts)` text each, the version it reported)."""
    from harness.execution.pool import Worker

    found, version = [], backend.version()
    for device in backend.capabilities.devices:
        w = Worker(name, device)
        ok = w.ready()
        facts = ", ".join(f"{k}={v}" for k, v in w.host.items())
        state = "yes" if ok else f"BROKEN: {w.reason}" if w.broken else w.reason
        found.append(f"{device}: {state}{f' ({facts})' if ok and facts else ''}")
        version = w.version if ok else version
        w.stop()
    return found, version
