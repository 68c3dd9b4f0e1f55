"""reference/cli.md: every `convdiff` subcommand and option, read from the argparse parsers, and the
pytest plugin's options and ini keys, read from its `pytest_addoption`."""

from __future__ import annotations

import argparse

from refgen import cell, code_span

HEADER = """# Command line reference

Generated from the parsers of `harness/commands/cli.py` (and the `fuzz` and `extract` modules they add)
when this site was built. The [CLI guide](../guide/cli.md) explains what the commands are for; exit
status: 0 when nothing unexpected happened, 1 for unexpected results or a broken or silent target, 2 for
bad input or usage.
"""


def subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """name -> (one-line help, parser) for every subcommand, in the order `convdiff --help` lists them."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    return {name: (helps.get(name, ""), p) for name, p in sub.choices.items()}


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    metavar = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices
                                 else action.dest.upper())
    return f"{names} {metavar}"


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, [], argparse.SUPPRESS) or not action.option_strings:
        return ""
    return code_span(action.default)


def options_table(parser: argparse.ArgumentParser) -> str:
    rows = ["| argument | default | what it does |", "| --- | --- | --- |"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        helptext = action.help or ""
        if action.choices and action.option_strings:
            helptext = f"{helptext} (one of: {', '.join(map(str, action.choices))})".strip()
        if action.nargs in ("*", "+") and not action.option_strings:
            helptext += " (zero or more)" if action.nargs == "*" else " (one or more)"
        if isinstance(action, argparse._AppendAction):
            helptext += " (repeatable)" if "repeatable" not in helptext else ""
        rows.append(f"| {code_span(_flag(action))} | {_default(action)} | {cell(helptext)} |")
    return "\n".join(rows)


def render_convdiff() -> str:
    from harness.commands.cli import build_parser

    parser = build_parser()
    commands = subcommands(parser)
    out = [HEADER, "| command | does |", "| --- | --- |"]
    out += [f"| [`convdiff {name}`](#convdiff-{name}) | {cell(helptext)} |" for name, (helptext, _) in commands.items()]
    for name, (helptext, sub) in commands.items():
        usage = " ".join(sub.format_usage().removeprefix("usage: ").split())
        out += ["", f"## convdiff {name} {{#convdiff-{name}}}", "", cell(sub.description or helptext), "",
                "```text", usage, "```", "", options_table(sub)]
    return "\n".join(out) + "\n"


def render_pytest() -> str:
    from _pytest.config.argparsing import Parser

    from harness.commands import plugin

    parser = Parser(_ispytest=True)
    plugin.pytest_addoption(parser)
    out = ["", "## pytest options {#pytest-options}", "",
           "Added by convdiff's pytest plugin (`harness/commands/plugin.py`, entry point `pytest11`), all under",
           "the `convdiff-` prefix so that they never meet a project's own; see the [pytest guide](../guide/pytest.md).",
           "", "| option | default | what it does |", "| --- | --- | --- |"]
    for group in parser._groups:
        for opt in group.options:
            attrs = opt.attrs()
            names = ", ".join(opt.names())
            choices = attrs.get("choices")
            metavar = attrs.get("metavar") or ("{" + ",".join(choices) + "}" if choices else "")
            flag = names if attrs.get("action") in ("store_true", "store_false") else f"{names} {metavar or 'VALUE'}"
            default = attrs.get("default")
            shown = "" if default in (None, [], False) else code_span(default)
            helptext = attrs.get("help", "")
            if attrs.get("action") == "append" and "repeatable" not in helptext:
                helptext += " (repeatable)"
            out.append(f"| {code_span(flag)} | {shown} | {cell(helptext)} |")
    inis = getattr(parser, "_inidict", {})
    if inis:
        out += ["", "ini keys (`[tool.pytest.ini_options]` in pyproject.toml, or pytest.ini):", "",
                "| key | type | what it says |", "| --- | --- | --- |"]
        for key, (helptext, kind, _default_value) in inis.items():
            out.append(f"| {code_span(key)} | {kind or 'string'} | {cell(helptext)} |")
    return "\n".join(out) + "\n"


def render() -> str:
    return render_convdiff() + render_pytest()
