"""`when:` in known_issues.yaml: a small, safe expression over a case's canonical parameters.

Some divergences depend on relations between fields (input length not a multiple of
the stride, kernel shorter than the stride), which value selectors cannot say. The
expression is parsed with `ast` and only a whitelist of node types and functions is
allowed: no attributes, no imports, no calls beyond any/all/zip/min/max/len/sum/prod/range/abs.

    when: "any(n % s or k < s for n, s, k in zip(input_size, stride, kernel_size))"
    when: "any(d > 1 and pb > 0 for d, pb in zip(dilation, pad_before))"

Beside the parameters it sees derived names (harness/model/features.py): per axis `pad_before`,
`pad_after`, `pad_total`, `reach` (dilation*(kernel-1)) and `out_size`; `in_per_group`, `out_per_group`,
`rank`, `transpose`, `acc_len` (K); and `path`, the adapter's route a result took (known_issues.py).
`convdiff scope` writes its rules in exactly this language.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from harness.model.case import later_defaults

FUNCTIONS = {f.__name__: f for f in (any, all, zip, min, max, len, sum, math.prod, range, abs)}
ALLOWED = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.BinOp, ast.Add,
    ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt,
    ast.GtE, ast.In, ast.NotIn, ast.IfExp, ast.Call, ast.Name, ast.Load, ast.Store, ast.Constant,
    ast.GeneratorExp, ast.ListComp, ast.comprehension, ast.Tuple, ast.List, ast.Subscript,
)


class PredicateError(ValueError):
    pass


def compile_predicate(text: str) -> Any:
    """Parse and check an expression; raises PredicateError naming what is not allowed."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise PredicateError(f"invalid expression: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED):
            raise PredicateError(f"'{type(node).__name__}' is not allowed in an expression")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise PredicateError("only any, all, zip, min, max, len, sum, prod, range, abs may be called")
    return compile(tree, "<when>", "eval")


def evaluate(code: Any, params: dict[str, Any]) -> bool:
    """The expression on a case's parameters (Case.params()); a field Case.params() leaves out at its default
    (unbatched, same_convention, weight_shape, the per-tensor dtypes) reads as that default."""
    names = {k: tuple(tuple(p) if isinstance(p, list) else p for p in v) if isinstance(v, list) else v
             for k, v in {**later_defaults(), **params}.items()}
    # Names go in globals so generator bodies (their own scope) can see them too.
    return bool(eval(code, {"__builtins__": {}, **FUNCTIONS, **names}))
