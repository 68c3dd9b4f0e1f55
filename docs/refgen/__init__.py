"""The site's reference pages, generated from the code each time the site is built.

Each module renders one page as Markdown from the code that it documents: `cli` from the argparse
parsers and the pytest plugin's options, `schema` from the case file's JSON Schema, `backends` from the
`convdiff.backends` registry, `findings` from cases/known_issues.yaml and the corpus, `properties` from the committed property files. docs/hooks.py hands
them to MkDocs as generated files; nothing is written into the source tree. Only adapter modules are
imported, never a framework (an adapter imports its framework in its worker, in setup()).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: docs/refgen/ -> docs/ -> .

_URL = re.compile(r"https?://[^\s<>()\]]+(?:\([^\s<>()]*\)[^\s<>()\]]*)*")
_ESCAPE = re.compile(r"([\\*_\[\]])")


def text(value: object) -> str:
    """Free text (a reason, a docstring) as Markdown that shows it as written: emphasis and link
    characters escaped, `<` kept from opening HTML, bare URLs made links; backtick code spans kept."""
    out = []
    for i, part in enumerate(str(value).split("`")):
        if i % 2:  # inside a code span
            out.append(f"`{part}`")
            continue
        pos = 0
        for m in _URL.finditer(part):
            out.append(_plain(part[pos:m.start()]))
            url = m.group(0).rstrip(".,;:")
            out.append(f"<{url}>")
            pos = m.start() + len(url)
        out.append(_plain(part[pos:]))
    return "".join(out)


def _plain(s: str) -> str:
    return _ESCAPE.sub(r"\\\1", s).replace("<", "&lt;")


def cell(value: object) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return text(" ".join(str(value).split())).replace("|", "\\|")


def indent(block: str, by: str = "    ") -> str:
    """A block indented for the body of a collapsible admonition (blank lines stay empty)."""
    return "\n".join(by + line if line.strip() else "" for line in block.splitlines())


def code_span(value: object) -> str:
    """`value` as an inline code span, whatever backticks it holds."""
    s = str(value)
    fence = "``" if "`" in s else "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def pages() -> dict[str, Callable[[], str]]:
    """Site path -> the function that renders it (imported here, so that a page's import error names it)."""
    from refgen import backends, cli, findings, properties, schema

    return {
        "reference/cli.md": cli.render,
        "reference/schema.md": schema.render,
        "reference/backends.md": backends.render,
        "reference/findings.md": findings.render,
        "reference/properties.md": properties.render,
    }
