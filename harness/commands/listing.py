"""`convdiff backends`: every registered backend, where it comes from, its version, and whether it runs here."""

from __future__ import annotations

import argparse

from backends.registry import clashes, get_backend, installed_backends, parse_backends, real_backends, registered
from harness.execution.host import describe_host


def cmd_backends(args: argparse.Namespace, argv: list[str]) -> int:
    from harness.execution.pool import Worker

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
        line, version = [], backend.version()
        for device in backend.capabilities.devices:
            w = Worker(name, device)
            ok = w.ready()
            broken += w.broken
            facts = ", ".join(f"{k}={v}" for k, v in w.host.items())
            state = "yes" if ok else f"BROKEN: {w.reason}" if w.broken else w.reason
            line.append(f"{device}: {state}{f' ({facts})' if ok and facts else ''}")
            version = w.version if ok else version
            w.stop()
        print(f"{name:<30} {version:<16} [{source}] " + "; ".join(line))
    return 1 if broken else 0
