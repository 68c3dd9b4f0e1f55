"""Steered draws: a configuration's neighbours, and more of them near failures.

`neighbour` changes one thing of a config (one axis of one per-axis field by one step, one pad, the
padding form, the channel counts or groups, dtype, layout, bias, batch, the epilogue, or forward and
transposed of the same rank), the moves that
cross the boundaries scope inference describes; `near` keeps drawing until the loader agrees the
neighbour is still what it was (valid, or invalid).

`Steer` is `convdiff fuzz`'s feedback: every failing result makes its configuration an anchor, and a
share of the later draws (NEAR_SHARE, once there is an anchor) are neighbours of an anchor, chosen with
weight 1 / (results of its kind so far): a failure of a rarely seen kind (a new signature, or a known
issue hit once) gets most of the draws, one seen a hundred times almost none. Each anchor gives at most
PER_ANCHOR neighbours; each neighbour remembers the targets that failed on its anchor (`origin`), and
pace.py runs it there whatever their cost. The draws are seeded ("<seed>:near:<k>"), so the same results give the same
configurations; the results themselves depend on the host, as the fuzz's findings do.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.commands.fuzz.draw import DTYPES, LAYOUTS, PER_AXIS, Draw, per_dim_lists
from harness.commands.fuzz.gen import MAX_ATTEMPTS, Config, build_config
from harness.model.case import EPILOGUE_OPS, QUANT_DTYPES, op_is_transpose, op_rank

NEAR_SHARE = 0.35
PER_ANCHOR = 6
MAX_ANCHORS = 400
AXIS_FIELDS = PER_AXIS
MOVES = ("axis", "axis", "axis", "pad", "pad", "padding_form", "channels", "groups", "dtype", "layout", "bias",
         "batch", "epilogue", "op")


def neighbour(fields: dict[str, Any], r: Draw) -> dict[str, Any]:
    """The config with one thing changed (the module doc); YAML spelling, lists per axis."""
    f = per_dim_lists(fields)
    rank, transpose = op_rank(f["op"]), op_is_transpose(f["op"])
    move = r.sampled_from(MOVES)
    j = r.integers(0, rank - 1)
    if move == "axis":
        name = r.sampled_from(AXIS_FIELDS if transpose else AXIS_FIELDS[:4])
        low = 0 if name == "output_padding" else 1
        f[name][j] = max(low, f[name][j] + r.sampled_from((-1, 1)))
    elif move == "pad" and not isinstance(f["padding"], str):
        side = r.integers(0, 1)
        f["padding"][j][side] = max(0, f["padding"][j][side] + r.sampled_from((-1, 1)))
    elif move in ("pad", "padding_form"):
        f["padding"] = r.sampled_from([m for m in ("same", "valid", [[0, 0]] * rank) if m != f["padding"]])
        if isinstance(f["padding"], str):
            f.pop("output_padding", None)
    elif move == "channels":
        g = f.get("groups", 1)
        name = r.sampled_from(("in_channels", "out_channels"))
        f[name] = max(g, f[name] + g * r.sampled_from((-1, 1)))
    elif move == "groups":
        g = f.get("groups", 1)
        if g > 1:
            f["groups"] = 1
        else:
            g = r.sampled_from((2, 3))
            f.update(groups=g, in_channels=g * max(1, f["in_channels"] // g), out_channels=g * max(1, f["out_channels"] // g))
    elif move == "dtype" and f.get("dtype") not in QUANT_DTYPES:
        f["dtype"] = r.sampled_from([t for t in DTYPES if t != f.get("dtype")])
    elif move == "layout":
        f["layout"] = r.sampled_from([x for x in LAYOUTS if x != f.get("layout")])
    elif move == "bias":
        f["bias"] = not f.get("bias", False)
    elif move == "batch":
        f["batch"] = max(1, f.get("batch", 1) + r.sampled_from((-1, 1)))
    elif move == "op":  # the same rank, forward <-> transposed
        rank_op = f["op"][-2:]
        f["op"] = f"conv{rank_op}" if transpose else f"conv_transpose{rank_op}"
        transpose = not transpose
    elif move == "epilogue" and f.get("dtype") not in QUANT_DTYPES:
        ops = list(f.get("epilogue", []))
        ops = ops[:-1] if ops and r.booleans() else [*ops, r.sampled_from(EPILOGUE_OPS)]  # one dropped or added
        f["epilogue"] = ops
        if not ops:
            f.pop("epilogue")
    if not transpose or not any(f.get("output_padding") or [0]) or isinstance(f["padding"], str):
        f.pop("output_padding", None)
    return f


def near(config_fields: dict[str, Any], kind: str, name: str, file: str = "fuzz-cases.yaml",
         focus: str = "near") -> Config | None:
    """A neighbour of a config that the loader agrees is still `kind` (valid or invalid), seeded by `name`
    (also its id); None when MAX_ATTEMPTS draws all crossed into the other kind or the schema's limits."""
    for attempt in range(MAX_ATTEMPTS):
        fields = neighbour(config_fields, Draw(f"{name}:{attempt}"))
        if _same(fields, config_fields):
            continue  # the move changed nothing here (a dtype move on a quantized config, ...)
        if not stateable(fields):
            continue
        built = build_config(0, 0, kind, focus, fields, file, name=name)
        if built is not None:
            return built
    return None


def stateable(fields: dict[str, Any]) -> bool:
    """Whether a framework's API can state the config: a transposed conv's weight is (C_in, C_out / groups, *k),
    so an out_channels that groups do not divide has no weight to hand it (every target would build one for the
    channels it can state and "accept" the invalid case; harness/commands/fuzz/invalid.py draws an indivisible
    in_channels there). An op move from such a forward conv, or a groups move, can reach one."""
    g = fields.get("groups", 1)
    return not (op_is_transpose(fields["op"]) and isinstance(g, int) and g > 0 and fields["out_channels"] % g)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two configs are the same convolution (absent and all-zero output_padding alike)."""
    def norm(f: dict[str, Any]) -> dict[str, Any]:
        f = per_dim_lists(f)
        return {k: v for k, v in f.items() if k not in ("id", "seed", "tags") and not (k == "output_padding" and not any(v))}
    return norm(a) == norm(b)


@dataclass
class Anchor:
    fields: dict[str, Any]
    kind: str
    key: str  # what kind of failure it showed: its known issue, or its signature
    drawn: int = 0
    backends: set[str] = field(default_factory=set)  # the targets that failed on it


class Steer:
    """The fuzz's feedback (the module doc): anchors from failures, neighbours drawn around them."""

    def __init__(self, seed: int, share: float = NEAR_SHARE) -> None:
        self.seed, self.share = seed, share
        self.anchors: list[Anchor] = []
        self.seen: Counter = Counter()
        self.known: set[str] = set()  # config ids already anchored
        self.drawn = 0
        self.asked = 0
        self.by_id: dict[str, Anchor] = {}
        self.origin: dict[str, frozenset[str]] = {}  # a neighbour's id -> the targets that failed on its anchor
        self.lock = threading.Lock()  # results come in on the controller's thread, draws go out on the prefetch one

    def feedback(self, config: Config, key: str, backend: str = "") -> None:
        """A failing result of `backend` on `config`, of kind `key` (a known issue's id, or a signature's text)."""
        with self.lock:
            self.seen[key] += 1
            cid = config.fields.get("id", "")
            if cid in self.by_id:
                self.by_id[cid].backends.add(backend)
            if config.case is None or cid in self.known:
                return
            self.known.add(cid)
            self.by_id[cid] = Anchor(config.fields, config.kind, key, backends={backend})
            self.anchors.append(self.by_id[cid])
            if len(self.anchors) > MAX_ANCHORS:
                self.anchors.remove(min(self.anchors, key=lambda a: 1.0 / self.seen[a.key]))

    def wants(self) -> bool:
        """Whether the next draw should be a neighbour: NEAR_SHARE of the draws once there is an anchor left
        (each question a seeded draw of its own)."""
        with self.lock:
            if not any(a.drawn < PER_ANCHOR for a in self.anchors):
                return False
            self.asked += 1
            return random.Random(f"{self.seed}:steer:{self.asked}").random() < self.share

    def next(self, file: str = "fuzz-cases.yaml") -> Config | None:
        """A neighbour of an anchor, chosen with weight 1 / (results of its kind so far); None without one."""
        with self.lock:
            live = [a for a in self.anchors if a.drawn < PER_ANCHOR]
            if not live:
                return None
            rnd = random.Random(f"{self.seed}:near:{self.drawn}")
            anchor = rnd.choices(live, weights=[1.0 / self.seen[a.key] for a in live])[0]
            anchor.drawn += 1
            name = f"fuzz_{self.seed}_n{self.drawn}"
            self.drawn += 1
            self.origin[name] = frozenset(anchor.backends)
        return near(anchor.fields, anchor.kind, name, file, focus="near")
