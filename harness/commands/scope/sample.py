"""Fresh configurations to test a scope with: the fuzz generator's draws, steered.

A `Pool` hands out configurations no run has seen, each with an id of its own (scope_<seed>_<k>):
random draws of the generator (harness/commands/fuzz/gen.py, its boundary foci included), optionally
with some fields set to the values a selector wants (`want`: op, dtype, layout, padding mode, bias,
batch, groups), and neighbours of given configurations (harness/commands/fuzz/steer.py: one thing
changed), which is how a rule's edge is crossed from both sides: the neighbours of a failure that fall
outside a rule are the cases "just outside" it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from harness.commands.fuzz.gen import MAX_ATTEMPTS, Config, Draw, build_config, config_fields
from harness.commands.fuzz.steer import near
from harness.model.case import OPS, Case

CASES_FILE = "scope-cases.yaml"
WANTED = ("op", "dtype", "layout", "padding", "bias", "batch", "groups", "expect")


def fields_of(case: Case) -> dict[str, Any]:
    """A canonical case as generator fields (YAML spelling), to draw its neighbours."""
    p = case.params()
    out = {k: p[k] for k in ("op", "batch", "in_channels", "out_channels", "groups", "input_size", "kernel_size",
                             "stride", "dilation", "padding", "bias", "layout", "dtype", "data")}
    if case.transpose and not isinstance(case.padding, str) and any(case.output_padding):
        out["output_padding"] = list(case.output_padding)
    if case.epilogue:
        out["epilogue"] = list(case.epilogue)
    if case.quant is not None:
        out["quant"] = {k: v for k, v in p["quant"].items() if v is not None}
        out.pop("data")
    if case.expect == "invalid":
        out["expect"] = "invalid"
    return out


def _choice(rnd: random.Random, want: Any) -> Any:
    """One value a selector value allows: a scalar, one of a list, or a number in a {min, max} range."""
    if isinstance(want, list):
        return _choice(rnd, rnd.choice(want))
    if isinstance(want, dict):
        lo = int(want.get("min", 1))
        return rnd.randint(lo, int(want.get("max", lo + 2)))
    return want


class Pool:
    """Fresh configurations for one command (the module doc)."""

    def __init__(self, seed: int, file: str = CASES_FILE, tag: str = "") -> None:
        """`tag`: a prefix of the ids (a known issue's own pool draws the same cases whatever is checked beside it)."""
        self.seed, self.file, self.tag = seed, file, tag
        self.k = 0

    def _name(self) -> str:
        self.k += 1
        return f"scope_{self.seed}_{self.tag}{self.k}"

    def random(self, n: int, kind: str = "valid", want: dict[str, Any] | None = None,
               keep: Callable[[Config], bool] | None = None, tries: int = 0) -> list[Config]:
        """Up to n random configurations of `kind` (valid or invalid) kept by `keep`, with the `want`ed fields
        set where the loader accepts them; at most `tries` draws (default 40 a configuration)."""
        out: list[Config] = []
        for _ in range(tries or 40 * n):
            if len(out) >= n:
                break
            name = self._name()
            cfg = self.draw(name, kind, want or {})
            if cfg is not None and (keep is None or keep(cfg)):
                out.append(cfg)
        return out

    def draw(self, name: str, kind: str, want: dict[str, Any]) -> Config | None:
        """One configuration of `kind` with the wanted fields set (a padding mode only: explicit pads are
        drawn per case), or None when the loader refused every attempt."""
        rnd = random.Random(f"{name}:want")
        for attempt in range(MAX_ATTEMPTS // 5):
            op = _choice(rnd, want["op"]) if "op" in want else None
            focus, fields = config_fields(Draw(f"{name}:{attempt}"), kind, op=op if op in OPS else None)
            for key in WANTED[1:]:
                value = _choice(rnd, want[key]) if key in want else None
                if value is not None and (key != "padding" or value in ("same", "valid")):
                    fields[key] = value
            if fields.get("dtype") not in ("uint8", "int8"):
                fields.pop("quant", None)
            else:
                fields.setdefault("quant", {})
                fields.pop("data", None)
                fields.pop("epilogue", None)
            if isinstance(fields.get("padding"), str):
                fields.pop("output_padding", None)
            built = build_config(0, self.seed, kind, focus, fields, self.file, name=name)
            if built is not None:
                return built
        return None

    def around(self, configs: Sequence[dict[str, Any]], n: int, kind: str = "valid",
               keep: Callable[[Config], bool] | None = None, tries: int = 0) -> list[Config]:
        """Up to n neighbours of the given configurations' fields (round robin), kept by `keep`."""
        out: list[Config] = []
        if not configs:
            return out
        for i in range(tries or 8 * n):
            if len(out) >= n:
                break
            cfg = near(configs[i % len(configs)], kind, self._name(), self.file)
            if cfg is not None and (keep is None or keep(cfg)):
                out.append(cfg)
        return out


def unique(configs: Iterable[Config]) -> list[Config]:
    """The configurations with no two alike (the same fields but for id, seed and tags)."""
    seen: set[str] = set()
    out = []
    for c in configs:
        key = repr(sorted((k, repr(v)) for k, v in c.fields.items() if k not in ("id", "seed", "tags")))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
