"""Extracted convolutions -> one case file: identical layers merged, every case checked.

Each distinct configuration becomes one case; the layers that share it are named in a
comment above it with their count. The text is then loaded back through the normal loader
(so it passes `convdiff validate`), and every case's output size is compared with the size
the framework itself produced for each of its layers: a case that would compute something
else than the layer is an error, never a file.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from harness.commands.extract.layer import LayerConv
from harness.model.loader import CASE_FILE_MARKER, load_file
from harness.model.yamlmap import InputError


class ExtractError(Exception):
    """The model cannot be written as cases (shown as one line, exit status 2)."""


@dataclass
class Group:
    conv: LayerConv  # the first layer with this configuration
    names: list[str]


def merge(layers: Iterable[LayerConv]) -> list[Group]:
    """Identical configurations merged, in the order the model first runs them."""
    groups: dict[tuple, Group] = {}
    for layer in layers:
        g = groups.setdefault(layer.config(), Group(layer, []))
        g.names.append(layer.name)
    return list(groups.values())


def slug(text: str) -> str:
    """A case-id-safe form of a model name: [a-z0-9_]+."""
    s = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return s or "model"


def _flow(value: object) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()


def _dims(t: tuple[int, ...]) -> object:
    """One value when every dimension agrees (the schema's int form), else the list."""
    return t[0] if len(set(t)) == 1 else list(t)


def _padding(p: object) -> object:
    if isinstance(p, str):
        return p
    pairs = [list(x) for x in p]  # type: ignore[union-attr]
    if all(b == a for b, a in pairs):
        return _dims(tuple(b for b, _ in pairs))
    return pairs


def _describe(c: LayerConv) -> str:
    """A short readable id part: convt2d_k4s2, conv2d_k3d2_dw."""
    parts = [c.op.replace("conv_transpose", "convt"), "_k" + "x".join(map(str, sorted(set(c.kernel_size))))]
    if max(c.stride) > 1:
        parts.append("s" + "x".join(map(str, sorted(set(c.stride)))))
    if max(c.dilation) > 1:
        parts.append("d" + "x".join(map(str, sorted(set(c.dilation)))))
    if c.groups > 1:
        parts.append("_dw" if c.groups == c.in_channels else f"_g{c.groups}")
    return "".join(parts)


def _case_lines(case_id: str, c: LayerConv, tags: list[str]) -> list[str]:
    fields: list[tuple[str, object]] = [
        ("id", case_id), ("op", c.op), ("batch", c.batch), ("in_channels", c.in_channels),
        ("out_channels", c.out_channels), ("input_size", _dims(c.input_size)), ("kernel_size", _dims(c.kernel_size)),
        ("stride", _dims(c.stride)), ("padding", _padding(c.padding)),
    ]
    if c.op.startswith("conv_transpose"):
        fields.append(("output_padding", _dims(c.output_padding)))
    fields += [("dilation", _dims(c.dilation)), ("groups", c.groups), ("bias", c.bias), ("layout", c.layout),
               ("dtype", c.dtype), ("tags", tags)]
    lines = [f"  - {fields[0][0]}: {fields[0][1]}"]
    lines += [f"    {k}: {_flow(v)}" for k, v in fields[1:]]
    return lines


def _names_comment(names: list[str], width: int = 110) -> list[str]:
    text = f"{len(names)} layer{'s' if len(names) > 1 else ''}: " + ", ".join(names)
    out, line = [], "  #"
    for word in text.split(" "):
        if len(line) + 1 + len(word) > width and line != "  #":
            out.append(line)
            line = "  #  "
        line += " " + word
    return [*out, line]


def render(groups: list[Group], model: str, header: list[str], tier: str = "full") -> str:
    """The case file's text: the marker line (pytest collects the file wherever it is written:
    harness/model/loader.py CASE_FILE_MARKER), a header comment, defaults, one case per group."""
    prefix = slug(model)
    total = sum(len(g.names) for g in groups)
    lines = [f"# {h}" if h else "#" for h in header]
    lines.insert(1 if lines and "$schema=" in lines[0] else 0, CASE_FILE_MARKER)  # after a schema line
    lines += [f"# {total} convolutions, {len(groups)} distinct configurations.", "", "defaults:",
              f"  tier: {tier}", "cases:"]
    width = max(2, len(str(len(groups))))
    for i, g in enumerate(groups, 1):
        case_id = f"{prefix}_{i:0{width}d}_{_describe(g.conv)}"
        lines += _names_comment(g.names)
        lines += _case_lines(case_id, g.conv, [prefix, "extracted"])
    return "\n".join(lines) + "\n"


def override(layers: list[LayerConv], batch: int | None, dtype: str | None) -> list[LayerConv]:
    """--batch / --dtype: write every case with this batch or dtype instead of the model's."""
    if batch is None and dtype is None:
        return layers
    return [replace(c, batch=batch or c.batch, dtype=dtype or c.dtype) for c in layers]


def check(text: str, groups: list[Group], layers: list[LayerConv]) -> None:
    """Load the text as a case file and compare each case's output size with the framework's."""
    with tempfile.TemporaryDirectory(prefix="convdiff-extract-") as d:
        path = Path(d) / "extracted.yaml"
        path.write_text(text)
        try:
            cases = load_file(path)
        except InputError as exc:
            raise ExtractError(f"the extracted cases do not load: {exc}") from None
    by_config: dict[tuple, list[LayerConv]] = {}
    for layer in layers:
        by_config.setdefault(layer.config(), []).append(layer)
    for case, g in zip(cases, groups):
        assert case.geometry is not None
        for layer in by_config[g.conv.config()]:
            if layer.out_size is not None and tuple(layer.out_size) != case.geometry.out_size:
                raise ExtractError(f"layer {layer.name}: the framework's output size {tuple(layer.out_size)} is not "
                                   f"the case's {case.geometry.out_size} ({case.id})")
