"""`convdiff`, the console command: a `run` starts its workers' templates before the rest of the command
line is imported, then harness.commands.cli runs the command as always.

The longest step of a small run is a template importing its framework (harness/execution/zygote.py; torch
~1.5 CPU-s). Started from cmd_run, it waited for the command line's own imports, the case files and the
backend list (~0.5 CPU-s on a 2-core AMD EPYC Zen 4, 2026-11-29); started here, after the two modules it
needs (~0.17 CPU-s), those overlap it on the other core. Only a `run` that names plain backends in
--backends on the CPU starts early: a module:Class spec registers itself in cli (its template is keyed by
the environment that registration changes), an unknown name is cli's usage error, and without --backends
(every installed backend) a typo in a case path would start every framework's import for nothing. cmd_run
asks for the same templates again, which finds them started (zygote.zygote_for).
"""

from __future__ import annotations

import sys


def option(argv: list[str], name: str) -> str | None:
    """The value of `--name VALUE` or `--name=VALUE` in argv (the last one), else None."""
    found = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(name + "="):
            found = arg.partition("=")[2]
    return found


def early_backends(argv: list[str]) -> list[str]:
    """The backends a `run` command line names, where it may start their templates early; [] otherwise."""
    if not argv or argv[0] != "run" or "-h" in argv or "--help" in argv:
        return []
    names = [n.strip() for n in (option(argv, "--backends") or "").split(",") if n.strip()]
    if not names or (option(argv, "--device") or "cpu") != "cpu" or any("=" in n for n in names):
        return []
    from backends.registry import TEST_PREFIXES, UnknownBackend, get_backend

    if any(":" in n and n.partition(":")[0] not in TEST_PREFIXES for n in names):
        return []
    try:
        return [n for n in dict.fromkeys(names) if "cpu" in get_backend(n).capabilities.devices]
    except UnknownBackend:
        return []


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    backends = early_backends(argv)
    if backends:
        from harness.execution.preloads import for_gradients, prestart

        # as cli.main decides it (argparse takes an unambiguous prefix too: --grad; --gradients is run's only --g option)
        for_gradients(any(len(a) > 2 and "--gradients".startswith(a) for a in argv))
        prestart(backends)
    from harness.commands.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
