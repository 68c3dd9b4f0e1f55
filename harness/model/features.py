"""What decides a convolution bug, as names a `when:` selector can use and as boolean features.

Two things, written once:

* `derived_names(params)`: the names a known issue's `when` may use beside the case's own parameters
  (harness/model/predicate.py evaluates it). Per spatial axis (tuples, in axis order): `pad_before`,
  `pad_after` and `pad_total` (the explicit pads; SAME resolved; a transposed conv's crop), `reach`
  (d*(k-1), how far the dilated kernel reaches past its first tap) and, for valid cases, `out_size`.
  Scalars: `in_per_group` and `out_per_group` (the channel counts of one group, floor-divided for an
  invalid case whose groups do not divide them), `rank`, `transpose` (a transposed conv) and, for valid
  cases, `acc_len` (K, the most products summed into one output element) and `padding_only` (per axis: no output
  along it is reached by an input element; a forward conv's windows all read padding). An `expect: invalid` case has
  no `out_size` nor `acc_len` (an expression using one does not match it); the pads exist for it too.
* `Atom`s: boolean features of a case, each a `when` expression (`text`) with its words (`words`), so that
  whatever rule scope inference builds from them is a selector convdiff already evaluates. Per-axis
  relations (`AXIS_RELATIONS`, over n=input_size, k=kernel_size, s=stride, d=dilation, pb/pa=pad_before/
  pad_after, e=output_padding, r=reach, o=out_size) appear as "on some axis" (any), "on every axis" (all),
  "on the last axis" ([-1]) and, two at once, "on one axis"; then whole-case facts (`SCALAR_ATOMS`); then
  thresholds on numbers (`NUMBERS`), whose cut points come from the data at hand (`threshold_atoms`).

`FeatureTable` evaluates every atom on a list of cases (as `Case.params()` mappings, which records carry)
into one boolean matrix. It computes the axis relations by evaluating their text, per axis, in the same
restricted evaluator `when` uses; tests/test_features.py checks that every atom's own text, evaluated as a
selector, gives the value in the matrix.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.model.case import EPILOGUE_OPS, FLOAT_DTYPES, OPS, QUANT_DTYPES, op_is_transpose, op_rank, resolve_geometry
from harness.model.predicate import FUNCTIONS, compile_predicate

# One letter (or two) per per-axis sequence, as the relations below spell them.
AXIS_VARS = {"n": "input_size", "k": "kernel_size", "s": "stride", "d": "dilation", "pb": "pad_before",
             "pa": "pad_after", "e": "output_padding", "r": "reach", "o": "out_size"}

# (relation on one axis, its words). Chosen for the boundaries conv bugs live on: sizes of 1, padding
# against the kernel's reach, output_padding against stride and dilation, stride against kernel, the
# first and last windows (how many input elements they see), lengths the stride does not divide (an
# input's, or a transposed conv's output: a kernel's tail block).
AXIS_RELATIONS: tuple[tuple[str, str], ...] = (
    ("n == 1", "input length 1"),
    ("n <= 2", "input length <= 2"),
    ("k == 1", "kernel length 1"),
    ("k > 1", "kernel longer than 1"),
    ("k > n", "kernel longer than the input"),
    ("s > 1", "stride > 1"),
    ("s == 1", "stride 1"),
    ("d > 1", "dilation > 1"),
    ("d == 1", "dilation 1"),
    ("s > k", "stride > kernel"),
    ("s == k", "stride = kernel"),
    ("d > s", "dilation > stride"),
    ("pb > 0", "pad before > 0"),
    ("pb == 0", "no pad before"),
    ("pa > 0", "pad after > 0"),
    ("pa == 0", "no pad after"),
    ("pb != pa", "pad before != pad after"),
    ("(pb + pa) % 2 == 1", "odd pad total"),
    ("r > 0 and pb == r", "pad before = d*(k-1)"),
    ("pb > r", "pad before > d*(k-1)"),
    ("pa > r", "pad after > d*(k-1)"),
    ("pb + pa > r", "pad total > d*(k-1)"),
    ("e > 0", "output_padding > 0"),
    ("e > 0 and e == s - 1", "output_padding = stride - 1"),
    ("e >= s", "output_padding >= stride"),
    ("e > 0 and e >= d", "output_padding >= dilation"),
    ("n % s != 0", "input length not a multiple of the stride"),
    ("o % s != 0", "output length not a multiple of the stride"),
    ("(n + pb + pa - r - 1) % s != 0", "the last window stops short of the padded end"),
    ("n + pb + pa < r + 1", "the dilated kernel reaches past the padded input"),
    ("sum(0 <= t * d - pb < n for t in range(k)) == 0", "the first window sees padding only"),
    ("sum(0 <= (o - 1) * s - pb + t * d < n for t in range(k)) == 0", "the last window sees padding only"),
    ("sum(0 <= (o - 1) * s - pb + t * d < n for t in range(k)) == 1", "the last window sees one input element"),
    ("o == 1", "output length 1"),
    ("o > 1", "output length > 1"),
    ("o <= 2", "output length <= 2"),
    ("o > n", "output longer than the input"),
    ("o < n", "output shorter than the input"),
)

_HALF = "dtype in ('float16', 'bfloat16')"
SCALAR_ATOMS: tuple[tuple[str, str], ...] = (
    ("transpose", "a transposed conv"),
    ("not transpose", "a forward conv"),
    *((f"op == '{op}'", op) for op in OPS),
    *((f"rank == {r}", f"{r}-D") for r in (1, 2, 3)),
    *((f"dtype == '{t}'", t) for t in (*FLOAT_DTYPES, *QUANT_DTYPES)),
    (_HALF, "a half type"),
    ("layout == 'channels_last'", "channels_last"),
    ("layout == 'channels_first'", "channels_first"),
    ("padding == 'same'", "padding same"),
    ("padding == 'valid'", "padding valid"),
    ("padding not in ('same', 'valid')", "explicit padding"),
    ("bias", "with bias"),
    ("not bias", "without bias"),
    ("batch > 1", "batch > 1"),
    ("batch == 1", "batch 1"),
    ("groups == 1", "ungrouped"),
    ("groups > 1", "grouped"),
    ("groups > 1 and groups == in_channels", "depthwise (groups = in_channels)"),
    ("groups > 1 and groups < in_channels", "grouped, more than one input channel per group"),
    ("in_per_group == 1", "one input channel per group"),
    ("out_per_group == 1", "one output channel per group"),
    ("in_per_group == out_per_group", "as many input as output channels per group"),
    ("in_per_group != out_per_group", "per-group input and output channel counts differ"),
    ("out_per_group > in_per_group", "more output than input channels per group"),
    ("in_channels == out_channels", "in_channels = out_channels"),
    ("in_channels == 1", "one input channel"),
    ("out_channels == 1", "one output channel"),
    ("in_channels % groups != 0", "groups do not divide in_channels"),
    ("out_channels % groups != 0", "groups do not divide out_channels"),
    ("expect == 'invalid'", "an invalid case"),
    ("len(epilogue) > 0", "with an epilogue"),
    ("len(epilogue) == 0", "no epilogue"),
    *((f"'{op}' in epilogue", f"epilogue has {op}") for op in EPILOGUE_OPS),
    *((f"data == '{k}'", f"{k} data") for k in ("normal", "uniform", "integers")),
)

# (expression, words): numbers whose thresholds rules may state; the cut points come from the data.
NUMBERS: tuple[tuple[str, str], ...] = (
    ("acc_len", "K"),
    ("batch", "batch"),
    ("in_channels", "in_channels"),
    ("out_channels", "out_channels"),
    ("groups", "groups"),
    ("in_per_group", "input channels per group"),
    ("out_per_group", "output channels per group"),
    ("max(kernel_size)", "the longest kernel"),
    ("max(stride)", "the largest stride"),
    ("max(dilation)", "the largest dilation"),
    ("max(input_size)", "the longest input"),
    ("min(out_size)", "the shortest output"),
    ("max(out_size)", "the longest output"),
    ("len(epilogue)", "epilogue ops"),
)
MAX_CUTS = 12  # threshold values per number


@dataclass(frozen=True)
class Atom:
    """One boolean feature: `text` is a `when` expression, `words` says it in English, `cost` how complex
    a rule reads with it (scalar facts 1, per-axis facts more, thresholds in between)."""

    text: str
    words: str
    cost: float


DERIVED_NAMES = ("pad_before", "pad_after", "pad_total", "reach", "in_per_group", "out_per_group", "rank",
                 "transpose", "out_size", "acc_len", "padding_only")
_last_names: tuple[Any, dict[str, Any]] = (None, {})  # the last mapping asked for: a result is matched
# against every entry of its backend with the same `params` object, so its names are made once


def derived_names(params: dict[str, Any]) -> dict[str, Any]:
    """The names `when` may use beside the parameters (the module doc); from a `Case.params()` mapping
    (read only; a new dict each call)."""
    global _last_names
    last, names = _last_names
    if last is params:
        return dict(names)
    names = _derive(params)
    _last_names = (params, names)
    return dict(names)


def _derive(params: dict[str, Any]) -> dict[str, Any]:
    op, groups = params["op"], max(int(params.get("groups") or 1), 1)
    transpose, rank = op_is_transpose(op), op_rank(op)
    n, k = tuple(params["input_size"]), tuple(params["kernel_size"])
    s, d = tuple(params["stride"]), tuple(params["dilation"])
    padding = params["padding"]
    pads = padding if isinstance(padding, str) else tuple(tuple(p) for p in padding)
    e = tuple(params.get("output_padding") or (0,) * rank)
    geo = resolve_geometry(transpose, n, k, s, pads, e if transpose else (), d)
    names: dict[str, Any] = {
        "pad_before": tuple(p[0] for p in geo.pads), "pad_after": tuple(p[1] for p in geo.pads),
        "pad_total": tuple(p[0] + p[1] for p in geo.pads), "reach": tuple(dd * (kk - 1) for kk, dd in zip(k, d)),
        "in_per_group": params["in_channels"] // groups, "out_per_group": params["out_channels"] // groups,
        "rank": rank, "transpose": transpose,
    }
    if params.get("expect", "valid") != "invalid":
        names["out_size"] = tuple(geo.out_size)
        names["acc_len"] = names["in_per_group"] * math.prod(k)
        names["padding_only"] = tuple(padding_only(transpose, *axis) for axis in
                                      zip(n, k, s, d, names["pad_before"], geo.out_size))
    return names


def padding_only(transpose: bool, n: int, k: int, s: int, d: int, pb: int, o: int) -> bool:
    """Whether every output along one axis is reached by no input element (so holds the bias alone): a forward
    conv's every window reads padding only; a transposed conv's every output position (uncropped, q + pb) is
    hit by no tap i*s + t*d. True for an axis without outputs."""
    if transpose:
        hit = {i * s + t * d - pb for i in range(n) for t in range(k)}
        return not any(0 <= q < o for q in hit)
    return all(not any(0 <= j * s - pb + t * d < n for t in range(k)) for j in range(o))


def selector_names(params: dict[str, Any]) -> dict[str, Any]:
    """What a `when` sees for this case: the parameters (lists as tuples) and the derived names."""
    names = {key: tuple(tuple(p) if isinstance(p, list) else p for p in v) if isinstance(v, list) else v
             for key, v in params.items()}
    names.update(derived_names(params))
    return names


# ---- the atom catalogue --------------------------------------------------------------------------------
class _Index(ast.NodeTransformer):
    """Rewrite the one-letter axis names of a relation as `sequence[-1]`."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in AXIS_VARS:
            return ast.Subscript(ast.Name(AXIS_VARS[node.id], ast.Load()), ast.Constant(-1), ast.Load())
        return node


def _axis_vars(relation: str) -> list[str]:
    used = {n.id for n in ast.walk(ast.parse(relation, mode="eval")) if isinstance(n, ast.Name)}
    return [v for v in AXIS_VARS if v in used]


def _over_axes(fn: str, relation: str) -> str:
    """`any(<relation> for d, pb in zip(dilation, pad_before))` (or all), binding only the names it uses."""
    names = _axis_vars(relation)
    if len(names) == 1:
        return f"{fn}({relation} for {names[0]} in {AXIS_VARS[names[0]]})"
    return f"{fn}({relation} for {', '.join(names)} in zip({', '.join(AXIS_VARS[v] for v in names)}))"


def _last(relation: str) -> str:
    return ast.unparse(_Index().visit(ast.parse(relation, mode="eval")))


def _join(a: str, b: str) -> str:
    wrap = [f"({x})" if " or " in x else x for x in (a, b)]
    return " and ".join(wrap)


def axis_atoms() -> list[Atom]:
    """The per-axis catalogue, in a fixed order: any, all, last axis for each relation, then the pairs."""
    out: list[Atom] = []
    for rel, words in AXIS_RELATIONS:
        out.append(Atom(_over_axes("any", rel), f"{words} on some axis", 1.2))
        out.append(Atom(_over_axes("all", rel), f"{words} on every axis", 1.3))
        out.append(Atom(_last(rel), f"{words} on the last axis", 1.4))
    for i, (a, wa) in enumerate(AXIS_RELATIONS):
        for b, wb in AXIS_RELATIONS[i + 1:]:
            out.append(Atom(_over_axes("any", _join(a, b)), f"{wa} and {wb} on one axis", 1.9))
    return out


# Parity: bf16 and int8 kernels pack input channels in pairs or quads (VNNI, AMX) and pick another kernel for an
# odd count. Half of all cases have either value, so on a few failures one of them often fits by chance: priced
# above every relation, it wins only where it explains more (a tie on three failures went to it at 1.0).
PARITY_ATOMS: tuple[tuple[str, str], ...] = (
    ("in_per_group % 2 == 0", "an even number of input channels per group"),
    ("in_per_group % 2 == 1", "an odd number of input channels per group"),
)
SCALARS = [Atom(text, words, 1.0) for text, words in SCALAR_ATOMS] + [Atom(t, w, 2.0) for t, w in PARITY_ATOMS]
AXIS_ATOMS = axis_atoms()


def threshold_atoms(values: dict[str, np.ndarray], focus: np.ndarray) -> list[tuple[Atom, np.ndarray]]:
    """`X >= t` and `X <= t` for each number X, with cut points t among the values X takes on the `focus`
    rows (the failures a rule is sought for), at most MAX_CUTS of them; rows where X does not exist are False."""
    out: list[tuple[Atom, np.ndarray]] = []
    for text, words in NUMBERS:
        col = values[text]
        have = ~np.isnan(col)
        cuts = np.unique(col[focus & have])
        if len(cuts) > MAX_CUTS:
            cuts = np.unique(np.quantile(cuts, np.linspace(0, 1, MAX_CUTS), method="nearest"))
        lo, hi = (np.nanmin(col), np.nanmax(col)) if have.any() else (0, 0)
        for t in cuts:
            t = int(t)
            if t > lo:
                out.append((Atom(f"{text} >= {t}", f"{words} >= {t}", 1.5), have & (col >= t)))
            if t < hi:
                out.append((Atom(f"{text} <= {t}", f"{words} <= {t}", 1.5), have & (col <= t)))
    return out


# ---- evaluation ------------------------------------------------------------------------------------------
def _compiled(texts: Sequence[str]) -> tuple[Any, list[Any]]:
    """All expressions as one tuple (fast), and each alone (for a case where one of them raises)."""
    return compile_predicate(f"({', '.join(texts)},)"), [compile_predicate(t) for t in texts]


_RELATIONS = _compiled([rel for rel, _ in AXIS_RELATIONS])
_SCALARS = _compiled([a.text for a in SCALARS])
_NUMBERS = _compiled([text for text, _ in NUMBERS])


def _values(compiled: tuple[Any, list[Any]], env: dict[str, Any]) -> list[Any]:
    """Each expression's value in `env`; None where one raises (a name this case lacks, e.g. out_size of an
    invalid case: the feature is then False, as a `when` that raises does not match)."""
    whole, each = compiled
    try:
        return list(eval(whole, env))
    except Exception:  # noqa: BLE001 - fall back to one at a time
        pass
    out = []
    for code in each:
        try:
            out.append(eval(code, env))
        except Exception:  # noqa: BLE001 - see above
            out.append(None)
    return out


def _axis_values(names: dict[str, Any]) -> np.ndarray:
    """(axes, relations): each relation on each axis of the case (3 rows; a missing axis stays False)."""
    out = np.zeros((3, len(AXIS_RELATIONS)), dtype=bool)
    env = {"__builtins__": {}, **FUNCTIONS, **names}
    seqs = [(v, names[seq]) for v, seq in AXIS_VARS.items() if seq in names]
    for axis in range(names["rank"]):
        env.update({v: values[axis] for v, values in seqs})
        out[axis] = [bool(x) for x in _values(_RELATIONS, env)]
    return out


@dataclass
class FeatureTable:
    """Every catalogue atom on every case: `matrix[i, j]` is atom i on case j; `numbers` the NUMBERS' values
    (NaN where a case has none)."""

    atoms: list[Atom]
    matrix: np.ndarray
    numbers: dict[str, np.ndarray]

    @classmethod
    def build(cls, cases: Sequence[dict[str, Any]]) -> FeatureTable:
        """From `Case.params()` mappings (a record's `params`)."""
        m = len(cases)
        axes = np.zeros((m, 3, len(AXIS_RELATIONS)), dtype=bool)
        ranks = np.zeros(m, dtype=int)
        scalars = np.zeros((len(SCALARS), m), dtype=bool)
        numbers = {text: np.full(m, np.nan) for text, _ in NUMBERS}
        for j, params in enumerate(cases):
            names = selector_names(params)
            ranks[j] = names["rank"]
            axes[j] = _axis_values(names)
            env = {"__builtins__": {}, **FUNCTIONS, **names}
            scalars[:, j] = [bool(x) for x in _values(_SCALARS, env)]
            for (text, _), v in zip(NUMBERS, _values(_NUMBERS, env)):
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    numbers[text][j] = v
        exists = np.arange(3)[None, :] < ranks[:, None]  # (cases, axes)
        rows: list[np.ndarray] = []
        for j in range(len(AXIS_RELATIONS)):
            rel = axes[:, :, j]
            rows.append(rel.any(axis=1))
            rows.append((rel | ~exists).all(axis=1) & (ranks > 0))
            rows.append(rel[np.arange(m), np.maximum(ranks - 1, 0)])
        for i in range(len(AXIS_RELATIONS)):
            for j in range(i + 1, len(AXIS_RELATIONS)):
                rows.append((axes[:, :, i] & axes[:, :, j]).any(axis=1))
        matrix = np.vstack([np.array(rows, dtype=bool).reshape(len(rows), m), scalars]) if m else \
            np.zeros((len(AXIS_ATOMS) + len(SCALARS), 0), dtype=bool)
        return cls([*AXIS_ATOMS, *SCALARS], matrix, numbers)

    def with_thresholds(self, focus: np.ndarray) -> FeatureTable:
        """This table plus the threshold atoms cut at the values of the `focus` rows."""
        extra = threshold_atoms(self.numbers, focus)
        if not extra:
            return self
        return FeatureTable([*self.atoms, *(a for a, _ in extra)],
                            np.vstack([self.matrix, np.array([v for _, v in extra], dtype=bool)]), self.numbers)

    def concat(self, other: FeatureTable) -> FeatureTable:
        """The cases of both tables, this one's first (tables of the catalogue atoms, without thresholds)."""
        return FeatureTable(self.atoms, np.hstack([self.matrix, other.matrix]),
                            {k: np.concatenate([v, other.numbers[k]]) for k, v in self.numbers.items()})

    def take(self, rows: Iterable[int] | np.ndarray) -> FeatureTable:
        """The same atoms on a subset of the cases (by position)."""
        idx = np.asarray(list(rows) if not isinstance(rows, np.ndarray) else rows, dtype=int)
        return FeatureTable(self.atoms, self.matrix[:, idx], {k: v[idx] for k, v in self.numbers.items()})
