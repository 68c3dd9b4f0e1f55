"""PyTorch's own OpInfo samples of nn.functional.conv*d and conv_transpose*d as a convdiff case file.

The samples PyTorch tests its convolutions with (`sample_inputs`, valid) and the calls it expects to raise
(`error_inputs`, `expect: invalid`), read from torch.testing._internal.common_methods_invocations and
written in convdiff's schema: the shapes, stride, padding, dilation, groups and output_padding, a bias when
the sample has one. Samples convdiff's schema cannot state are left out and counted: unbatched inputs,
negative or zero strides and paddings (an input error in the schema itself), channel counts that do not
match the weight. Running the file through convdiff checks that no known issue's selector claims a case
it does not explain (a "known issue now passes" hint on a case invalid for another reason, a route the
bug is not on).

    .venv/bin/python bench/opinfo_cases.py -o reports/bench/opinfo.yaml [--hints]

`--hints` then runs each case where a known issue that does not allow a pass selects it, and lists the
"known issue now passes (fixed upstream?)" hints: none should be false.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.model.schema import validate_fields  # noqa: E402 - after the path: run as a script
from harness.model.validity import ShapeError, canonical_case  # noqa: E402

OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def _ints(v: Any, rank: int) -> list[int]:
    return [int(x) for x in v] if isinstance(v, list | tuple) else [int(v)] * rank


def fields(op: str, sample: Any, invalid: bool) -> dict[str, Any] | str:
    """A sample as case fields, or why it cannot be one."""
    x, w = sample.input, sample.args[0] if sample.args else sample.kwargs.get("weight")
    bias = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("bias")
    rank, transpose = int(op[-2]), op.startswith("conv_transpose")
    if not hasattr(x, "shape") or not hasattr(w, "shape") or x.dim() != rank + 2 or w.dim() != rank + 2:
        return "unbatched or a weight of another rank"
    kw = sample.kwargs
    groups = int(kw.get("groups", sample.args[5] if transpose and len(sample.args) > 5 else 1))
    c_in = int(x.shape[1])
    c_out = int(w.shape[1]) * groups if transpose else int(w.shape[0])
    per_group = int(w.shape[0]) if transpose else int(w.shape[1]) * groups
    not_dividing = groups > 0 and c_in % groups != 0  # a case convdiff states: `groups` not dividing the channels
    if per_group != c_in and not not_dividing:
        return "input and weight channel counts differ"
    pad = kw.get("padding", 0)
    out: dict[str, Any] = {
        "op": op, "batch": int(x.shape[0]), "in_channels": c_in, "out_channels": c_out,
        "input_size": [int(n) for n in x.shape[2:]], "kernel_size": [int(n) for n in w.shape[2:]],
        "stride": _ints(kw.get("stride", 1), rank), "dilation": _ints(kw.get("dilation", 1), rank),
        "padding": pad if isinstance(pad, str) else _ints(pad, rank), "groups": groups,
        "bias": bias is not None, "dtype": "float32",
    }
    if transpose and kw.get("output_padding"):
        out["output_padding"] = _ints(kw["output_padding"], rank)
    if invalid:
        out["expect"] = "invalid"
    return out


def cases() -> tuple[list[dict[str, Any]], Counter]:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    found: list[dict[str, Any]] = []
    skipped: Counter = Counter()
    for info in op_db:
        op = info.name.removeprefix("nn.functional.")
        if op not in OPS:
            continue
        samples = [(s, False) for s in info.sample_inputs("cpu", torch.float32)]
        if info.error_inputs_func is not None:
            samples += [(e.sample_input, True) for e in info.error_inputs("cpu")]
        for i, (s, invalid) in enumerate(samples):
            f = fields(op, s, invalid)
            if isinstance(f, str):
                skipped[f] += 1
                continue
            f = {"id": f"opinfo_{op}_{'error' if invalid else 'sample'}_{i}", **f}
            model, problem = validate_fields(f)
            if problem or model is None:
                skipped[f"the schema refuses it ({problem[0] if problem else '?'})"] += 1
                continue
            try:
                _, problems = canonical_case(model, model.id, "opinfo.yaml", 0)
            except ShapeError as exc:
                skipped[f"the schema refuses it ({exc.field})"] += 1
                continue
            if bool(problems) != invalid:  # an error input that is a valid convolution: torch raised for its own reasons
                skipped["an error input that is a valid convolution" if invalid else "a sample that is invalid"] += 1
                continue
            found.append(f)
    return found, skipped


def hints(path: Path) -> list[str]:
    """Run each OpInfo case on the installed backends for which a known issue that does not allow a pass selects
    it, and return the "known issue now passes (fixed upstream?)" hints: `entry case backend`."""
    from backends.registry import installed_backends
    from harness.execution.runner import run_cases
    from harness.judge.known_issues import load_known_issues, project_known_issues
    from harness.judge.verdict import Verdicts
    from harness.model.loader import load_cases

    known = load_known_issues(project_known_issues())
    loaded = load_cases([str(path)])
    pairs = {(c.id, b) for c in loaded for b in installed_backends()
             if any("pass" not in e.status for e in known.candidates(c, b, "cpu"))}
    backends = sorted({b for _, b in pairs})
    records: list = []
    run_cases([c for c in loaded if any(i == c.id for i, _ in pairs)], [(b, "cpu") for b in backends], records.append,
              Verdicts(known), timeout=120.0, select=lambda b, c: (c.id, b) in pairs)
    return [f"{r.known_issue} {r.case_id} {r.backend}" for r in records if r.fixed_upstream]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--out", default="reports/bench/opinfo.yaml")
    p.add_argument("--hints", action="store_true", help="then run them where a known issue selects them and print "
                   "the 'known issue now passes' hints")
    args = p.parse_args()
    found, skipped = cases()
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# PyTorch's OpInfo conv samples (bench/opinfo_cases.py)\ncases:\n"
                    + "".join(f"  - {json.dumps(f)}\n" for f in found), encoding="utf-8")
    print(f"{path}: {len(found)} cases ({sum(1 for f in found if f.get('expect') == 'invalid')} invalid); left out: "
          + ", ".join(f"{n} {why}" for why, n in skipped.most_common()))
    if args.hints:
        found_hints = hints(path)
        print(f"{len(found_hints)} 'known issue now passes (fixed upstream?)' hint(s)"
              + "".join(f"\n  {h}" for h in found_hints))
    return 0


if __name__ == "__main__":
    sys.exit(main())
