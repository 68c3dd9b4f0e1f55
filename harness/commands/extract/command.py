"""`convdiff extract MODEL [--input-shape N,C,...] [-o FILE.yaml] [--dtype D] [--batch N]`."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from harness.commands.extract import FRAMEWORKS, extract, parse_shape
from harness.commands.extract.writer import ExtractError
from harness.model.case import FLOAT_DTYPES as DTYPES
from harness.model.case_schema import with_schema_comment


def add_parser(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser("extract", help="write one case per distinct convolution of an ONNX file, a torch "
                                        "module:callable or a Keras model")
    ex.add_argument("model", help="model.onnx | model.keras | package.module:callable (torch nn.Module or Keras model)")
    ex.add_argument("--input-shape", help="N,C,... (torch, required) or the model's own layout (Keras, ONNX: "
                                          "overrides the model's input shape)")
    ex.add_argument("-o", "--out", help="case file to write (default: standard output)")
    ex.add_argument("--dtype", choices=DTYPES, help="write every case with this dtype (default: the model's)")
    ex.add_argument("--batch", type=int, help="write every case with this batch (default: the model's)")
    ex.add_argument("--framework", choices=FRAMEWORKS, help="for module:callable when it cannot be told apart")
    ex.add_argument("--name", help="model name for case ids and tags (default: from MODEL)")


def cmd_extract(args: argparse.Namespace, argv: list[str]) -> int:
    try:
        if args.batch is not None and args.batch < 1:
            raise ExtractError(f"--batch must be >= 1, got {args.batch}")
        result = extract(args.model, parse_shape(args.input_shape), framework=args.framework, batch=args.batch,
                         dtype=args.dtype, name=args.name, command=shlex.join(["convdiff", *argv]))
    except ExtractError as exc:
        print(f"convdiff extract: {exc}", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(with_schema_comment(args.out, result.text))
        print(f"wrote {args.out}: {len(result.layers)} convolutions, {result.distinct} distinct ({result.framework})",
              file=sys.stderr)
    else:
        sys.stdout.write(result.text)
    return 0
