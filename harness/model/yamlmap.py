"""Safe YAML loading that remembers the line of every mapping key and list item.

Errors in case files must point at a line, so we compose the node graph with
PyYAML's SafeLoader and build plain Python values ourselves, keeping lines aside.

Speed: libyaml's CSafeLoader composes the same nodes about 10x faster (0.02 s against 0.21 s for
cases/known_issues.yaml, which every run, test process and subprocess reads). It is used when PyYAML
has it, for text the pure-Python reader accepts; any error it raises sends the text through the
pure-Python SafeLoader again, so a message and its line are always that loader's.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import yaml

T = TypeVar("T")

FastLoader = getattr(yaml, "CSafeLoader", None)  # libyaml's parser, PyYAML's safe constructor and resolver


class InputError(Exception):
    """A problem in user input, shown as one line `path:line: field: problem`."""

    def __init__(self, path: str, line: int, field: str, problem: str) -> None:
        super().__init__(f"{path}:{line}: {field}: {problem}")
        self.path, self.line, self.field, self.problem = path, line, field, problem


class LineMap(dict):
    """A dict whose `lines[key]` is the 1-based line of that key's value."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: dict[Any, int] = {}


class LineList(list):
    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: list[int] = []


def _build(node: yaml.Node, loader: Any, path: str) -> Any:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out = LineMap(line)
        for key_node, value_node in node.value:
            key = _build(key_node, loader, path)
            if not isinstance(key, str):
                raise InputError(path, key_node.start_mark.line + 1, str(key), "keys must be strings")
            if key in out:
                raise InputError(path, key_node.start_mark.line + 1, key, "duplicate key")
            out[key] = _build(value_node, loader, path)
            out.lines[key] = value_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = LineList(line)
        for item in node.value:
            seq.append(_build(item, loader, path))
            seq.lines.append(item.start_mark.line + 1)
        return seq
    return loader.construct_object(node, deep=True)


def _fast(text: str, path: str) -> Any:
    """The document through libyaml, or None when it is not there, the text holds a character the
    pure-Python reader refuses, or libyaml raises (then the caller's loader gives the exact error). A byte
    order mark after the first character: libyaml skips it, PyYAML's parser refuses it (found by the
    mutation fuzz in tests/test_yamlmap.py), so such a text goes to the pure loader too."""
    if (FastLoader is None or "\t" in text or "\ufeff" in text[1:]
            or yaml.reader.Reader.NON_PRINTABLE.search(text)):
        return None
    loader = FastLoader(text)
    try:
        node = loader.get_single_node()
        if node is None or not _readers_agree(text, node):
            return None
        return _build(node, loader, path)
    except (yaml.YAMLError, InputError):
        return None
    finally:
        loader.dispose()


def _scalars(root: yaml.Node) -> Iterator[yaml.ScalarNode]:
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, yaml.ScalarNode):
            yield node
        else:
            todo.extend(v for pair in node.value for v in (pair if isinstance(pair, tuple) else (pair,)))


# a block scalar's header: its indicator, then chomping and indentation indicators, then what follows them
BLOCK_HEADER = re.compile(r"[|>][-+0-9]*(.?)")


def _readers_agree(text: str, root: yaml.Node) -> bool:
    """Whether PyYAML reads the text as libyaml did, where the two are known to part (a mutation fuzz of the
    corpus, tests/test_yamlmap.py): every '?' sits inside a quoted scalar (libyaml reads '?' inside a flow
    collection as part of a plain scalar, PyYAML as a key indicator), and no block scalar's header runs into
    a '#' (`|#`: libyaml takes a comment, PyYAML wants a space or a line break first and refuses it)."""
    scalars = list(_scalars(root)) if "?" in text or "#" in text else []
    for node in scalars:
        if node.style in ("|", ">"):
            header = BLOCK_HEADER.match(text, node.start_mark.index)
            if header and header.group(1) == "#":
                return False
    return _questions_quoted(text, [n for n in scalars if n.style in ("'", '"')])


def _questions_quoted(text: str, quoted: list[yaml.ScalarNode]) -> bool:
    """Whether every '?' of the text sits inside one of the `quoted` scalars."""
    at = text.find("?")
    if at < 0:
        return True
    spans = [(node.start_mark.index, node.end_mark.index) for node in quoted]
    spans.sort()
    i = 0
    while at >= 0:
        while i < len(spans) and spans[i][1] <= at:
            i += 1
        if i == len(spans) or not spans[i][0] < at < spans[i][1]:
            return False
        at = text.find("?", at + 1)
    return True


_PARSED: dict[tuple[str, str, str], Any] = {}


def parsed_once(path: str, kind: str, build: Callable[[str, str], T]) -> T:
    """`build(path, text)` for the file's current text, computed once per process for the same path, kind and
    text (a session reads known_issues.yaml and each case file tens of times: ~5 CPU-s of parsing in `make
    test`). The text is read every time, so an edited file is parsed again; what `build` returns is shared
    between callers and must not be changed by them. An InputError is raised again, not remembered."""
    with unreadable(path), open(path, "rb") as fh:
        raw = fh.read()
    key = (path, kind, hashlib.sha256(raw).hexdigest())
    if key not in _PARSED:
        with unreadable(path):
            text = raw.decode("utf-8")
        _PARSED[key] = build(path, text)
    return _PARSED[key]


@contextlib.contextmanager
def unreadable(path: str) -> Iterator[None]:
    """A file that cannot be opened, read or decoded as UTF-8: the one-line InputError that says so."""
    try:
        yield
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, 0, "file", f"cannot read: {exc.__class__.__name__}: {exc}") from None


def load_yaml(path: str, text: str | None = None) -> Any:
    """Parse one YAML document safely; raise InputError with the failing line."""
    if text is None:
        with unreadable(path), open(path, encoding="utf-8") as fh:
            text = fh.read()
    fast = _fast(text, path)
    if fast is not None:
        return fast
    try:
        loader = yaml.SafeLoader(text)  # its reader already refuses a control character
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        raise InputError(path, line, "yaml", f"unacceptable character #x{exc.character:04x}: control characters "
                         "are not allowed") from None
    try:
        node = loader.get_single_node()
        if node is None:
            raise InputError(path, 1, "file", "empty file")
        return _build(node, loader, path)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise InputError(path, line, "yaml", problem) from None
    except yaml.YAMLError as exc:
        raise InputError(path, 1, "yaml", str(exc).splitlines()[0]) from None
    finally:
        loader.dispose()
