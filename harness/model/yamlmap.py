"""Safe YAML loading that remembers the line of every mapping key and list item.

Errors in case files must point at a line, so we compose the node graph with
PyYAML's SafeLoader and build plain Python values ourselves, keeping lines aside.
"""

from __future__ import annotations

from typing import Any

import yaml


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


def _build(node: yaml.Node, loader: yaml.SafeLoader, path: str) -> Any:
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


def load_yaml(path: str, text: str | None = None) -> Any:
    """Parse one YAML document safely; raise InputError with the failing line."""
    try:
        if text is None:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, 0, "file", f"cannot read: {exc.__class__.__name__}: {exc}") from None
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
