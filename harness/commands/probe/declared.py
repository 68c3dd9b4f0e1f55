"""What an adapter's `Capabilities` declaration (`convdiff backends --capabilities`) says about one probe cell.

The declaration is prose meant for people; this reads the parts of it that decide a cell:
ops, devices, layouts and dtypes by their first word (`float16 (cuda only)`: not on cpu),
`output_padding: none`, and the `kind: none` segments of `groups` and `dilation`
(`conv1d/2d (filter I/g); conv3d, transpose: none`). Any other qualifier in parentheses
leaves the cell undecided (None), so a test compares only what the text really states.
"""

from __future__ import annotations

import re

from backends.base import Capabilities
from harness.model.case import Case

_PAREN = re.compile(r"\([^)]*\)")


def _kind_matches(kind: str, case: Case) -> bool:
    """'conv' = forward ops, 'transpose' = transposed ops, 'conv3d', 'conv1d/2d', 'transpose2d', ..."""
    kind = kind.strip().lower()
    family = "transpose" if case.transpose else "conv"
    if kind in ("conv", "transpose"):
        return kind == family
    m = re.fullmatch(r"(conv|transpose)((?:\d+d?/?)+)", kind)
    if not m or m.group(1) != family:
        return False
    return str(case.rank) in re.findall(r"\d", m.group(2))


def _feature(text: str, case: Case) -> bool | None:
    """A groups/dilation declaration applied to a case that uses the feature."""
    text = text.strip().lower()
    if text == "none":
        return False
    decided: bool | None = None
    for segment in text.split(";"):
        kinds, _, verdict = segment.partition(":")
        if verdict.strip().startswith("none"):
            if any(_kind_matches(k, case) for k in _PAREN.sub("", kinds).split(",")):
                return False
            continue
        for kind in re.split(r",\s*(?![^()]*\))", segment):  # commas outside parentheses
            qualified = "(" in kind or ":" in kind
            if _kind_matches(_PAREN.sub("", kind).split(":")[0], case):
                decided = None if qualified else True
                if decided is None:
                    return None
    return decided if decided is not None else False


def _names(entries: tuple[str, ...]) -> dict[str, str]:
    """Name -> its qualifier: `float16 (cuda only)`, or `a, b: qualifier` for several names."""
    out = {}
    for e in entries:
        head, sep, qualifier = e.strip().partition(":")
        if sep and "(" not in head:  # 'float64, float16: where the provider registers them'
            out |= {w.strip(): qualifier.strip() for w in head.split(",")}
            continue
        word, _, rest = e.strip().partition(" ")
        out[word.rstrip(":,")] = rest.strip()
    return out


def declared(caps: Capabilities, case: Case, device: str, epilogue_ops: tuple[str, ...] = ()) -> bool | None:
    """False: the declaration says the adapter cannot express the cell; True: it can; None: it does not say.
    `epilogue_ops`: the ops the adapter says it applies after the conv (Backend.epilogue_ops)."""
    verdicts: list[bool | None] = []
    if case.epilogue:
        verdicts.append(all(op in epilogue_ops for op in case.epilogue))
    verdicts.append(case.op in caps.ops and device in caps.devices)
    layouts = _names(caps.layouts)
    verdicts.append(case.layout in layouts)
    dtypes = _names(caps.dtypes)
    if case.dtype not in dtypes:
        verdicts.append(False)
    else:
        qual = dtypes[case.dtype]
        verdicts.append(True if not qual else (device != "cpu" if qual == "(cuda only)" else None))
    if case.transpose and any(case.output_padding or ()):
        verdicts.append(caps.output_padding.strip().lower() != "none")
    if case.groups > 1:
        verdicts.append(_feature(caps.groups, case))
    if max(case.dilation) > 1:
        verdicts.append(_feature(caps.dilation, case))
    if False in verdicts:
        return False
    return None if None in verdicts else True
