"""A cold night's cost with and without one of the harness's savings, measured side by side.

    python bench/nightly_ab.py --baseline NAME=VALUE [--sample 128] [--part 1] [--backends LIST] --out DIR

Runs bench/nightly_sample.py's work (`--tier full --gradients --relations all` on a fixed part of the corpus) twice,
each from an empty cache of its own: with the environment setting `--baseline` (the saving switched off) and
without it (the default). Prints the wall seconds of both, their ratio, the worker seconds per target (records plus
the batched builds' seconds), and how many records differ in status or max |err| (0: the same verdicts). `make
bench` measures two savings:
- `CONVDIFF_BATCH=cases` on the targets whose adapters build in batches (the default list): each relation run
  built alone, against built in the batches with the cases (harness/execution/ahead.py);
- `CONVDIFF_INDUCTOR_KEEP=0` on torch-inductor: every run compiled anew, against a run whose module is the one
  the previous run compiled (a relation's repeat, its batch rows) calling it again (backends/torch/inductor.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BATCHED = ("executorch,executorch-portable,iree,torch-onnx-ort,tvm,tvm-bound,tvm-onnx-import,"
           "tvm-onnx-import-output-shape,tvm-torch-import,tvm-tflite-import")


def run(mode: str, args: argparse.Namespace) -> tuple[float, Path]:
    out, cache = args.out / mode, args.out / f"cache-{mode}"
    for stale in (out, cache):  # each way from an empty cache
        shutil.rmtree(stale, ignore_errors=True)
    env = {**os.environ, "CONVDIFF_CACHE": str(cache)}
    name, _, value = args.baseline.partition("=")
    if mode == "baseline":
        env[name] = value
    else:
        env.pop(name, None)
    start = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "bench" / "nightly_sample.py"), "--sample", str(args.sample),
                    "--part", str(args.part), "--backends", args.backends, "--out", str(out)], env=env, check=True)
    return time.perf_counter() - start, out


def per_target(out: Path) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        seconds[r["backend"]] += r.get("duration_s") or 0.0
    builds = json.loads((out / "summary.json").read_text()).get("builds", {})
    for target, counts in builds.items():  # keyed backend-device
        seconds[target.rpartition("-")[0]] += float(counts.get("seconds", 0.0))
    return seconds


def verdicts(out: Path) -> dict[tuple, tuple]:
    rows = (json.loads(line) for line in (out / "results.jsonl").read_text().splitlines())
    return {(r["backend"], r["case_id"], r["output"]): (r["status"], r.get("max_abs_err")) for r in rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="NAME=VALUE: the environment setting that switches the saving off")
    ap.add_argument("--sample", type=int, default=128)
    ap.add_argument("--part", type=int, default=1)
    ap.add_argument("--backends", default=BATCHED)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    walls, outs = {}, {}
    for mode in ("baseline", "default"):
        walls[mode], outs[mode] = run(mode, args)
    a, b = per_target(outs["baseline"]), per_target(outs["default"])
    print(f"{'target':30s} {args.baseline:>24s} {'default':>10s}")
    for t in sorted(a, key=lambda t: -a[t]):
        print(f"{t:30s} {a[t]:23.1f}s {b.get(t, 0.0):9.1f}s")
    print(f"{'all':30s} {sum(a.values()):23.1f}s {sum(b.values()):9.1f}s")
    va, vb = verdicts(outs["baseline"]), verdicts(outs["default"])
    differ = [k for k in va.keys() | vb.keys() if va.get(k) != vb.get(k)]
    print(f"wall: with {args.baseline} {walls['baseline']:.0f} s, by default {walls['default']:.0f} s "
          f"({walls['default'] / walls['baseline']:.2f}x); records {len(va)} and {len(vb)}, {len(differ)} differ")
    for k in sorted(differ)[:20]:
        print("  differs:", k, va.get(k), vb.get(k))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
