"""No green on nothing: a pytest run that asked for convdiff and collected no case item fails, with one line
that says why (harness/commands/plugin.py calls this at the session's end).

A run asks for convdiff when its command line (or PYTEST_ADDOPTS) gives a `--convdiff-*` option, or when the
ini file declares `convdiff_cases` and the paths the run collects from hold one of those directories (a run of
`pytest tests/test_x.py` in a project that declares `tests/conv_cases` did not ask for the cases).

The commonest cause is pytest's, not the project's: pytest decides its rootdir and ini file from the command
line before it loads plugins (entry points are loaded after `determine_setup`, _pytest/config/__init__.py
`Config.parse`), so at that point `--convdiff-known-issues ../ours.yaml` is an unknown option followed by a
path, and `../ours.yaml`, an existing file, moves the rootdir to the common ancestor of the invocation directory
and that path, where no ini file declares `convdiff_cases` (pytest-dev/pytest#8846, closed as a known
limitation). The `=` form, `--convdiff-known-issues=../ours.yaml`, is one token and moves nothing. A plugin
cannot undo it: pytest has read (or not read) the ini file before any plugin code runs. So this module
recognises it and says what to type instead, also as a warning when items were collected all the same.
"""

from __future__ import annotations

import itertools
import os
import shlex
from pathlib import Path

import pytest

PREFIX = "--convdiff-"


def _command_line(config: pytest.Config) -> list[str]:
    """The arguments the user gave: PYTEST_ADDOPTS, then the command line (as pytest reads them)."""
    return [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]


def options_given(config: pytest.Config) -> bool:
    return any(a.startswith(PREFIX) for a in _command_line(config))


def _collect_paths(config: pytest.Config) -> list[Path]:
    """The paths the run collects from (its positional arguments, else testpaths or the invocation directory)."""
    here = config.invocation_params.dir
    return [Path(here, a.split("::")[0]).resolve() for a in config.args]


def _covers(paths: list[Path], dirs: list[Path]) -> bool:
    return any(d.is_relative_to(p) or p.is_relative_to(d) for p in paths for d in dirs)


def asked(config: pytest.Config, declared: list[Path]) -> bool:
    """Whether this run asked for convdiff's cases (the module docstring)."""
    return options_given(config) or _covers(_collect_paths(config), declared)


def misread_rootdir(config: pytest.Config) -> str | None:
    """When a space-separated `--convdiff-* VALUE` moved pytest's rootdir (the module docstring): what happened
    and what to type instead; else None."""
    args = _command_line(config)
    here = config.invocation_params.dir
    moved = [(a, v) for a, v in itertools.pairwise(args)
             if a.startswith(PREFIX) and "=" not in a and not v.startswith("-") and Path(here, v).exists()]
    if not moved or config.option.rootdir or config.option.inifilename:
        return None
    try:  # pytest's own rule, on the positional arguments it parsed once the plugin's options were known
        from _pytest.config.findpaths import determine_setup

        rootpath, inipath, *_ = determine_setup(inifile=None, override_ini=config.option.override_ini,
                                                args=list(config.option.file_or_dir or []), rootdir_cmd_arg=None,
                                                invocation_dir=here)
    except Exception:  # noqa: BLE001 - another pytest than the one read: say nothing rather than guess
        return None
    if rootpath == config.rootpath and inipath == config.inipath:
        return None
    option, value = moved[0]
    ini = f"{inipath} was not read" if inipath is not None else "the ini file pytest would have used was not read"
    return (f"pytest took {value!r}, the value of {option} written with a space, for a test path (it reads paths "
            f"before plugins add their options), so its rootdir is {config.rootpath} and {ini}: write "
            f"{option}={value} (pytest-dev/pytest#8846)")


def reason(config: pytest.Config, declared: list[Path], cases_seen: int) -> str:
    """Why no case item was collected, as far as this process can tell."""
    misread = misread_rootdir(config)
    if misread:
        return misread
    where = f"rootdir {config.rootpath}, ini file {config.inipath or 'none'}"
    if not declared:
        return (f"no case directory is declared ({where}): set ini convdiff_cases, pass --convdiff-cases DIR, "
                "or give a file whose first line is '# convdiff: cases'")
    shown = ", ".join(map(str, declared))
    if not _covers(_collect_paths(config), declared):
        return (f"the paths collected ({', '.join(map(str, config.args))}) hold none of the declared case "
                f"directories ({shown})")
    if not cases_seen:
        return f"no case file (*.yaml) under the declared directories ({shown})"
    tier, device = config.getoption("convdiff_tier"), config.getoption("convdiff_device")
    return (f"{cases_seen} case(s) were loaded, but none makes an item with --convdiff-tier {tier} and "
            f"--convdiff-device {device} on the backends asked for")
