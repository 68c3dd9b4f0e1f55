"""Cost per case of the deployed paths (compiled, graph-mode, inference engines), cold and warm (part of `make bench`).

    python bench/deployed_cost.py [--backends torch-inductor,...] [--files cases/epilogues.yaml]

For each backend: one `convdiff run` with an empty cache directory (cold: every export, convert and
compile is paid), then the same run again with that cache kept (warm). Printed per backend: wall
seconds of each whole run, and the adapter's own time per case (the mean of the records'
`duration_s`: what the worker spent in the framework for one case, import excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEPLOYED = ("torch-inductor", "tensorflow-graph", "tf-xla", "jax-jit", "paddle-inference", "tvm-bound",
            "litert", "litert-ref")


def one_run(backend: str, files: list[str], cache: Path, out: Path) -> tuple[float, float, int]:
    """(wall seconds, mean duration_s per result, results) of one `convdiff run`."""
    exe = str(Path(sys.executable).with_name("convdiff"))
    env = {**os.environ, "CONVDIFF_CACHE": str(cache)}
    start = time.perf_counter()
    subprocess.run([exe, "run", *files, "--backends", backend, "--out", str(out)], cwd=ROOT, env=env,
                   check=False, capture_output=True)
    wall = time.perf_counter() - start
    durations = [json.loads(line)["duration_s"] for line in (out / "results.jsonl").read_text().splitlines()]
    return wall, sum(durations) / max(len(durations), 1), len(durations)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default=",".join(DEPLOYED))
    p.add_argument("--files", default="cases/epilogues.yaml")
    args = p.parse_args(argv)
    from backends.registry import get_backend

    files = args.files.split(",")
    print(f"{'backend':<18} {'results':>7} {'cold wall s':>11} {'cold ms/case':>12} {'warm wall s':>11} {'warm ms/case':>12}")
    for name in args.backends.split(","):
        reason = get_backend(name).unavailable_reason()
        if reason:
            print(f"{name:<18} not installed: {reason}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cache, out = Path(tmp) / "cache", Path(tmp) / "out"
            cold = one_run(name, files, cache, out)
            warm = one_run(name, files, cache, out)
        print(f"{name:<18} {cold[2]:>7} {cold[0]:>11.1f} {1e3 * cold[1]:>12.1f} {warm[0]:>11.1f} {1e3 * warm[1]:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
