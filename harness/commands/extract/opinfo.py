"""PyTorch's own OpInfo samples of its convolutions, written as a convdiff case file.

    python -m harness.commands.extract.opinfo [-o cases/opinfo.yaml] [--check]

Reads the installed torch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db): for
nn.functional.conv1d/2d/3d and conv_transpose1d/2d/3d, the samples PyTorch tests them with (`sample_inputs`, on
CPU in float32) and the calls it expects to raise (`error_inputs`). Each becomes one case exactly as OpInfo
passes it: an unbatched input as `unbatched: true`, the weight's own shape where it is not the one the other
fields imply (`weight_shape`), each tensor's dtype where they differ (`input_dtype`, `weight_dtype`,
`bias_dtype`), `padding: 'same'` as torch's (`same_convention: torch`), and every error input as
`expect: invalid`. A one-element per-axis list is torch's shorthand for every axis and is written as one int.

Every case is checked against torch before it is written: a sample's output shape must be the one the case
resolves to, an error input must raise. A sample the schema cannot state, or an error input torch runs, stops
the generator with the reason (exit 2): the file is all of OpInfo's conv samples or nothing. `--check` compares
the file with what the installed torch gives now (exit 1 when they differ); tests/test_opinfo_cases.py runs it.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

import yaml

from harness.model.case import op_is_transpose, op_rank
from harness.model.case_schema import with_schema_comment
from harness.model.loader import load_file
from harness.model.schema import CASE_FIELDS, validate_fields
from harness.model.validity import ShapeError, canonical_case

OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
DEFAULT_OUT = Path(__file__).resolve().parents[3] / "cases" / "opinfo.yaml"
# positional arguments after (input, weight) in torch.nn.functional's signatures
CONV_ARGS = ("bias", "stride", "padding", "dilation", "groups")
TRANSPOSE_ARGS = ("bias", "stride", "padding", "output_padding", "groups", "dilation")
FLOATS = ("float32", "float64", "float16", "bfloat16")


class OpInfoError(Exception):
    """A sample that cannot be written as the case it is (one line, exit 2)."""


def _dtype(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.")


def _per_axis(v: Any, rank: int) -> int | list[int]:
    """torch's int-or-sequence argument in the schema's form: one int where every axis has the same value
    (torch expands a one-element sequence to every axis), else the list."""
    items = [int(x) for x in v] if isinstance(v, list | tuple) else [int(v)]
    if len(items) == 1 or len(set(items)) == 1:
        return items[0]
    if len(items) != rank:
        raise OpInfoError(f"{len(items)} values for a rank-{rank} op: {items}")
    return items


def _call(op: str, sample: Any) -> dict[str, Any]:
    """The call's arguments by name: input, weight, then the functional's positional names, then keywords."""
    names = TRANSPOSE_ARGS if op_is_transpose(op) else CONV_ARGS
    args = list(sample.args)
    call = {"input": sample.input, "weight": args.pop(0) if args else sample.kwargs.get("weight")}
    call.update(zip(names, args))
    call.update({k: v for k, v in sample.kwargs.items() if k != "weight"})
    return call


def case_fields(op: str, sample: Any, invalid: bool) -> dict[str, Any]:
    """One OpInfo sample as case fields (without its id), exactly as torch is called."""
    call = _call(op, sample)
    x, w, b = call["input"], call["weight"], call.get("bias")
    rank, transpose = op_rank(op), op_is_transpose(op)
    unbatched = x.dim() == rank + 1
    c = 0 if unbatched else 1
    groups = int(call.get("groups", 1))
    w_shape = [int(n) for n in w.shape]
    kernel = w_shape[2:] if len(w_shape) == rank + 2 else ([1] * rank + w_shape)[-rank:]
    if b is not None:
        out_channels = int(b.shape[0])
    elif transpose:
        out_channels = w_shape[1] * max(groups, 1)
    else:
        out_channels = w_shape[0]
    f: dict[str, Any] = {"op": op}
    if not unbatched and int(x.shape[0]) != 1:
        f["batch"] = int(x.shape[0])
    f.update(in_channels=int(x.shape[c]), out_channels=out_channels,
             input_size=[int(n) for n in x.shape[c + 1:]], kernel_size=kernel)
    for name in ("stride", "dilation", "output_padding"):
        if name in call:
            f[name] = _per_axis(call[name], rank)
    padding = call.get("padding", 0)
    if isinstance(padding, str):
        f["padding"] = padding
        if padding == "same":
            f["same_convention"] = "torch"
    elif "padding" in call:
        f["padding"] = _per_axis(padding, rank)
    f["groups"] = groups
    f["bias"] = b is not None
    if unbatched:
        f["unbatched"] = True
    dtypes = {"input_dtype": _dtype(x), "weight_dtype": _dtype(w), **({"bias_dtype": _dtype(b)} if b is not None else {})}
    dtype = next((d for d in dtypes.values() if d in FLOATS), "float32")
    f["dtype"] = dtype
    f.update({k: d for k, d in dtypes.items() if d != dtype})
    if invalid:
        f["expect"] = "invalid"
        derived = _derived_weight_shape(f, rank, transpose)
        if derived != w_shape:
            f["weight_shape"] = w_shape
    f["tags"] = ["opinfo", *(["unbatched"] if unbatched else []), *(["invalid"] if invalid else [])]
    return {k: v for k, v in f.items() if k in CASE_FIELDS}


def _derived_weight_shape(f: dict[str, Any], rank: int, transpose: bool) -> list[int]:
    """The weight the other fields imply (Case.weight_shape without a stated one)."""
    g = max(f["groups"], 1)
    k = list(f["kernel_size"])
    if transpose:
        return [f["in_channels"], f["out_channels"] // g, *k]
    return [f["out_channels"], f["in_channels"] // g, *k]


def _checked(fields: dict[str, Any], case_id: str, op: str, sample: Any, invalid: bool) -> None:
    """The case must mean what torch does with the sample: the same output shape, or a refusal both ways."""
    import torch

    model, problem = validate_fields({"id": case_id, **fields})
    if problem or model is None:
        raise OpInfoError(f"{case_id}: {problem[0]}: {problem[1]}" if problem else case_id)
    try:
        case, problems = canonical_case(model, case_id, "opinfo", 0)
    except ShapeError as exc:
        raise OpInfoError(f"{case_id}: {exc.field}: {exc.problem}") from None
    call = _call(op, sample)
    fn = getattr(torch.nn.functional, op)
    try:
        with warnings.catch_warnings():  # torch's note on an even kernel under padding='same'
            warnings.simplefilter("ignore")
            y = fn(**call)
    except Exception as exc:  # noqa: BLE001 - an error input raises: what the case must say
        if not invalid:
            raise OpInfoError(f"{case_id}: torch raised on a sample: {type(exc).__name__}: {exc}") from None
        if not problems:
            raise OpInfoError(f"{case_id}: torch refuses it, the case is a valid convolution") from None
        return
    if invalid or problems:
        raise OpInfoError(f"{case_id}: torch ran it (output {tuple(y.shape)}), the case says "
                          f"{'invalid' if problems else 'valid'}: {problems}")
    if tuple(y.shape) != case.output_shape:
        raise OpInfoError(f"{case_id}: torch's output {tuple(y.shape)}, the case's {case.output_shape}")


def opinfo_cases() -> tuple[list[dict[str, Any]], str]:
    """Every conv sample and error input of the installed torch's OpInfo database as case mappings (id
    first), in op_db order; and torch's version."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    out: list[dict[str, Any]] = []
    for info in op_db:
        op = info.name.removeprefix("nn.functional.")
        if op not in OPS or info.name != f"nn.functional.{op}":
            continue
        samples = [(s, False) for s in info.sample_inputs("cpu", torch.float32)]
        if info.error_inputs_func is not None:
            samples += [(e.sample_input, True) for e in info.error_inputs("cpu")]
        counts = {False: 0, True: 0}
        for sample, invalid in samples:
            case_id = f"{op}_{'error' if invalid else 'sample'}_{counts[invalid]:02d}"
            counts[invalid] += 1
            fields = case_fields(op, sample, invalid)
            _checked(fields, case_id, op, sample, invalid)
            out.append({"id": case_id, **fields})
    return out, str(torch.__version__)


def render(cases: list[dict[str, Any]], torch_version: str, path: Path) -> str:
    """The case file's text: a header, then one flow mapping per case."""
    errors = [c for c in cases if c.get("expect") == "invalid"]
    samples = [c for c in cases if c.get("expect") != "invalid"]

    def unbatched(group: list[dict[str, Any]]) -> int:
        return sum(1 for c in group if c.get("unbatched"))

    head = (f"# PyTorch's OpInfo conv samples and error inputs (torch {torch_version}): {len(samples)} samples "
            f"({unbatched(samples)} unbatched), {len(errors)} error inputs ({unbatched(errors)} unbatched).\n"
            "# Generated by `python -m harness.commands.extract.opinfo`; do not edit (tests/test_opinfo_cases.py checks\n"
            "# that the installed torch gives this file).\n"
            "cases:\n")
    body = "".join("  - " + yaml.safe_dump(c, default_flow_style=True, sort_keys=False, width=10**6).strip() + "\n"
                   for c in cases)
    return with_schema_comment(path, head + body)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.commands.extract.opinfo", description=__doc__.splitlines()[0])
    p.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT, help="the case file (default: cases/opinfo.yaml)")
    p.add_argument("--check", action="store_true", help="compare the file with what the installed torch gives")
    args = p.parse_args(argv)
    try:
        cases, version = opinfo_cases()
    except OpInfoError as exc:
        print(f"opinfo: {exc}", file=sys.stderr)
        return 2
    text = render(cases, version, args.out)
    if args.check:
        if not args.out.exists() or args.out.read_text(encoding="utf-8") != text:
            print(f"{args.out}: differs from torch {version}'s OpInfo samples; regenerate it with "
                  "python -m harness.commands.extract.opinfo", file=sys.stderr)
            return 1
        print(f"{args.out}: current ({len(cases)} cases, torch {version})")
        return 0
    args.out.write_text(text, encoding="utf-8")
    load_file(args.out)  # the loader's own checks, once more, on the written file
    print(f"{args.out}: {len(cases)} cases ({sum(1 for c in cases if c.get('expect') == 'invalid')} error inputs), "
          f"torch {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
