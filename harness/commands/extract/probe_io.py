"""The probes' side of the subprocess protocol: arguments in as JSON, layers out as JSON.

`python -m harness.commands.extract.<framework>_probe ARGS_JSON OUT_JSON`: ARGS_JSON holds the
probe's keyword arguments; the probe writes its list of LayerConv records to OUT_JSON.
A problem with the user's model or arguments is one line on stderr and exit status 2.
auto_probe.py adds two: IMPORT_FAILED (the model's module cannot be imported) and NOT_ONE (it imports
neither framework, or both).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

from harness.commands.extract.layer import LayerConv

IMPORT_FAILED, NOT_ONE = 3, 4  # auto_probe's exit statuses beside main's


class ProbeError(Exception):
    """A problem with the model or the arguments, shown to the user as one line."""


def resolve_spec(spec: str, kind: type, what: str) -> Any:
    """`package.module:attr.path` -> the `kind` instance it names, or the one it returns when called."""
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in filter(None, attr.split(".")):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ProbeError(f"cannot load '{spec}': {exc}") from None
    if not isinstance(obj, kind) and callable(obj):
        obj = obj()
    if not isinstance(obj, kind):
        raise ProbeError(f"'{spec}' is not a {what} nor returns one (got {type(obj).__name__})")
    return obj


def main(probe: Callable[..., list[LayerConv]]) -> int:
    args_path, out_path = sys.argv[1], sys.argv[2]
    with open(args_path) as f:
        kwargs: dict[str, Any] = json.load(f)
    try:
        layers = probe(**kwargs)
    except ProbeError as exc:
        print(f"convdiff-extract: {exc}", file=sys.stderr)
        return 2
    with open(out_path, "w") as f:
        json.dump([layer.to_json() for layer in layers], f)
    return 0
