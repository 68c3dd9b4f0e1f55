"""libyaml's fast path in harness/model/yamlmap.py answers exactly as the pure-Python SafeLoader does, or
not at all (then the pure loader parses, so every error message and line stays its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.model import yamlmap
from harness.model.yamlmap import InputError, LineList, LineMap, load_yaml

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(yamlmap.FastLoader is None, reason="PyYAML was built without libyaml")


def shape(value: Any) -> Any:
    """The value with the lines of every mapping key and list item, and the exact scalar types."""
    if isinstance(value, LineMap):
        return ("map", value.line, [(k, shape(v), value.lines[k]) for k, v in value.items()])
    if isinstance(value, LineList):
        return ("list", value.line, [shape(v) for v in value], list(value.lines))
    return (type(value).__name__, repr(value))


def pure(text: str) -> Any:
    """What the pure-Python loader gives: the value, or its one-line error."""
    fast, yamlmap.FastLoader = yamlmap.FastLoader, None
    try:
        return shape(load_yaml("t.yaml", text))
    except InputError as exc:
        return str(exc)
    finally:
        yamlmap.FastLoader = fast


def assert_same(text: str) -> bool:
    fast = yamlmap._fast(text, "t.yaml")
    if fast is None:
        return False
    assert shape(fast) == pure(text), text
    return True


@pytest.mark.parametrize("path", sorted((ROOT / "cases").glob("*.yaml")), ids=lambda p: p.name)
def test_corpus_files_take_the_fast_path_and_read_the_same(path: Path) -> None:
    assert assert_same(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", [
    "a: [x?y]\n",            # libyaml: a plain scalar 'x?y'; PyYAML: a key indicator, then an error
    "a: [1,\t2]\n",          # a tab where PyYAML refuses one and libyaml does not
    "a:\n  - 1\n\t- 2\n",
    "a: x?y\n",              # a '?' outside quotes: always the pure loader
    "a: 1\n# why?\n",
    "a: 1\n\ufeff",          # a byte order mark after the start: libyaml skips it, PyYAML refuses it (a fuzz find)
    "a: 1\nb: \ufeff2\n",
    "a: |# x\n  b\n",       # a comment straight after a block indicator: libyaml takes it, PyYAML refuses it
    "a: >-2#\n   b\n",      # (a fuzz find)
])
def test_where_the_parsers_part_the_pure_loader_answers(text: str) -> None:
    assert yamlmap._fast(text, "t.yaml") is None


def test_a_question_mark_inside_quotes_stays_fast() -> None:
    assert assert_same('cases: {case: "dtypes?dtype=float16,data=normal?", op: "conv?d"}\n')


CORPUS = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "cases").glob("*.yaml"))]
PIECES = [":", "-", " ", "\t", "[", "]", "{", "}", '"', "'", "#", "\n", "&a ", "*a", "!", "|", ">", "%", "?", "\\",
          "\x85", "\ufeff", "~", "\u00e9", "? ", ": ", "- ", "\n  ", "<<: ", "!!str ", "---", "...", "\r", "'?'"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_corpus_text_reads_the_same_or_falls_back(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(CORPUS))
    start = data.draw(st.integers(0, max(text.count("\n") - 1, 0)))
    lines = text.splitlines(True)[start:start + 20]
    chars = list("".join(lines))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(chars)))
        if chars and data.draw(st.booleans()):
            del chars[min(at, len(chars) - 1)]
        else:
            chars.insert(at, data.draw(st.sampled_from(PIECES)))
    assert_same("".join(chars))


SCALARS = st.one_of(st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False),
                    st.text(alphabet="abc xyz:-#?'\"[]{},&*!|>%@`\\\u00e9\n\t01.5e+~", max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(alphabet="abcdefg_?", min_size=1, max_size=6), inner, max_size=4),
                      max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(VALUES, st.sampled_from([True, False, None]), st.sampled_from([20, 80, 10**6]), st.booleans())
def test_dumped_documents_read_the_same(value: Any, flow: bool | None, width: int, unicode: bool) -> None:
    assert_same(yaml.safe_dump({"k": value}, default_flow_style=flow, width=width, allow_unicode=unicode))
