"""A snippet's parts: the module docstring of fixed shape (cases/upstream/README.md) and the code after it.

    <Title, one line>

    Kind: <kind>
    Ask: <one sentence>

    What happens: <one line>

    Expected: <one line>

    Mechanism: <one line>

    Symptoms: <one line per symptom; only for a root with several entries>

`parse_snippet` reads it and lists where it departs from that shape ("line N: ..."). A script of the older
shape (a `Project:` / `Upstream:` header, hard-wrapped sections) is read too, marked `legacy`, so that its
report still renders while it waits for conversion.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from harness.judge.entry_upstream import KINDS

SECTIONS = ("What happens", "Expected", "Mechanism", "Symptoms")
REQUIRED = SECTIONS[:3]
LEGACY_SECTIONS = ("What happens", "Expected", "Mechanism", "Host")
CODE_LINES = 20  # the most lines of code after the docstring
# the convolution calls of the frameworks' APIs a snippet may make: (transposed, the rank where the name says it)
_CALLS = (
    (True, re.compile(r"conv_transpose([123])d|ConvTranspose([123])d|conv([123])d_transpose|Conv([123])DTranspose"
                      r"|Conv([23])DBackpropInput")),
    (True, re.compile(r"ConvTranspose\b|\bconv_transpose\(")),  # ONNX's op, jax.lax.conv_transpose: any rank
    (False, re.compile(r"\b(?:conv|Conv)([123])[dD]\b(?!_transpose)")),
    (False, re.compile(r"[\"'.]Conv\b|QLinearConv|\bconvolution\(")),  # ONNX's Conv, tf.nn.convolution: any rank
)


@dataclass
class Snippet:
    title: str = ""
    kind: str = ""
    ask: str = ""
    sections: dict[str, str] = field(default_factory=dict)
    code: str = ""  # everything after the docstring's closing quotes
    legacy: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def code_lines(self) -> int:
        return len(self.code.strip("\n").splitlines())

    @property
    def ops(self) -> set[tuple[bool, int | None]]:
        """The convolutions the code calls: (transposed, rank or None where the call does not name it)."""
        return code_ops(self.code)

    @property
    def symptoms(self) -> list[str]:
        return [ln.strip().lstrip("-* ").strip() for ln in self.sections.get("Symptoms", "").splitlines() if ln.strip()]


def code_ops(code: str) -> set[tuple[bool, int | None]]:
    """(transposed, rank) of each convolution call in some code (comments left out): `F.conv1d` (False, 1),
    `nn.ConvTranspose2d` (True, 2), `tf.nn.conv3d_transpose` (True, 3), ONNX's "ConvTranspose" (True, None)."""
    text = "\n".join(line.split("#", 1)[0] for line in code.splitlines())
    found: set[tuple[bool, int | None]] = set()
    for transposed, pattern in _CALLS:
        for m in pattern.finditer(text):
            rank = next((int(g) for g in m.groups() if g), None)
            found.add((transposed, rank))
    return found


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """(line offset, text) of each blank-line-separated paragraph."""
    out: list[tuple[int, str]] = []
    start, lines = 0, []
    for i, line in enumerate([*text.splitlines(), ""]):
        if line.strip():
            if not lines:
                start = i
            lines.append(line.rstrip())
        elif lines:
            out.append((start, "\n".join(lines)))
            lines = []
    return out


def parse_snippet(source: str) -> Snippet:
    snip = Snippet()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        snip.problems.append(f"line {exc.lineno}: not valid Python: {exc.msg}")
        return snip
    text = ast.get_docstring(tree, clean=True)
    if not text:
        snip.problems.append("line 1: no module docstring")
        snip.code = source
        return snip
    node = tree.body[0]
    snip.code = "\n".join(source.splitlines()[node.end_lineno:]).strip("\n") + "\n"
    raw = node.value.value  # type: ignore[attr-defined]
    first = node.lineno + raw[: len(raw) - len(raw.lstrip())].count("\n")  # the file line of its first text
    paragraphs = _paragraphs(text)
    title_line, title = paragraphs[0]
    if "\n" in title:
        snip.problems.append(f"line {first + title_line}: the title must be one line")
    snip.title = " ".join(title.split())
    rest = paragraphs[1:]
    if rest and re.match(r"(Project|Upstream):", rest[0][1]):
        return _legacy(snip, rest)
    header_line = first + (rest[0][0] if rest else 1)
    if rest and rest[0][1].startswith("Kind:"):
        _header(snip, rest[0][1], header_line)
        rest = rest[1:]
    else:
        snip.problems.append(f"line {header_line}: missing the 'Kind:' and 'Ask:' lines after the title")
    _sections(snip, rest, first)
    return snip


def _header(snip: Snippet, para: str, line: int) -> None:
    for i, text in enumerate(para.splitlines()):
        key, _, value = text.partition(":")
        if key == "Kind":
            snip.kind = value.strip()
        elif key == "Ask":
            snip.ask = value.strip()
        else:
            snip.problems.append(f"line {line + i}: expected 'Kind:' or 'Ask:', got '{text[:40]}'")
    if snip.kind not in KINDS:
        snip.problems.append(f"line {line}: Kind must be one of {', '.join(KINDS)}, got '{snip.kind}'")
    if not snip.ask:
        snip.problems.append(f"line {line}: missing the 'Ask:' line")


def _sections(snip: Snippet, rest: list[tuple[int, str]], first: int) -> None:
    for line, para in rest:
        label = next((s for s in SECTIONS if para.startswith(f"{s}:")), None)
        if label is None:
            snip.problems.append(f"line {first + line}: a paragraph that is no section ({', '.join(SECTIONS)})")
            continue
        if label in snip.sections:
            snip.problems.append(f"line {first + line}: '{label}:' appears twice")
        body = para[len(label) + 1:].strip()
        if "\n" in body and label != "Symptoms":
            snip.problems.append(f"line {first + line}: '{label}:' must be one line (no hard wrapping)")
        snip.sections[label] = body
    missing = [s for s in REQUIRED if s not in snip.sections]
    if missing:
        snip.problems.append(f"line {first}: missing section(s): {', '.join(s + ':' for s in missing)}")
    elif [s for s in snip.sections if s in SECTIONS] != [s for s in SECTIONS if s in snip.sections]:
        snip.problems.append(f"line {first}: sections out of order (want {', '.join(SECTIONS)})")


def _legacy(snip: Snippet, rest: list[tuple[int, str]]) -> Snippet:
    """The older shape: its sections, each joined into one line; the whole script is its code."""
    snip.legacy = True
    current = None
    for _, para in rest[1:]:
        label = next((s for s in LEGACY_SECTIONS if para.startswith(f"{s}:")), None)
        if label is not None:
            current = label
            snip.sections[label] = " ".join(para[len(label) + 1:].split())
        elif current is not None:
            snip.sections[current] += " " + " ".join(para.split())
    snip.problems.append("the older docstring shape (Project:/Upstream: header): convert it to Kind/Ask and "
                         "one-line sections, the full script to checks/")
    return snip
