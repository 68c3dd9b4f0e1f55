"""Where a `convdiff run` spends its time, per backend, measured by cProfile (part of `make bench`).

    python bench/where_time_goes.py [--backends torch,tvm,...] [--files cases/conv2d.yaml] [--tier full]

Two runs of the same command, `--jobs 1`, each with CONVDIFF_PROFILE set (every worker runs under
cProfile and writes its stats when it stops, harness/execution/worker.py): the first with an empty
cache directory (cold), the second keeping it (warm). Per backend, from its workers' profiles:

- import: the worker's start (`start_backend`: the framework import, device setup, host facts);
- compile: export, conversion and compilation, or loading their cached result: the cumulative time
  of the entry points in COMPILE (the frameworks' own APIs, plus convdiff's caches around them);
- run: the rest of each case's `execute` (building inputs, calling the compiled thing, copying out);
- ms/case: (compile + run) per result.

The controller's share, from profiles of this process: oracle (inputs and the float64 oracle of
every case, `prepare`) and judge (comparison, diagnosis and known issues of every result, `judge`,
profiled in the controller of the warm run, where it runs on the main thread with --jobs 1).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (path fragment, function name): export / convert / compile entry points, disjoint within any one backend
COMPILE = (
    ("backends/artifacts.py", "fetch"),                  # ONNX exporters/converters, through their cache
    ("backends/tvm/direct.py", "compile_cached"),        # every TVM path: build, or load the cached library
    ("onnxruntime_inference_collection.py", "__init__"),  # InferenceSession: graph optimization
    ("openvino/_ov_api.py", "compile_model"),
    ("backends/litert/interpreter.py", "model"),                     # TFLite conversion, through its cache
    ("backends/paddle/inference.py", "model_dir"),       # paddle.jit.save, through its cache
    ("torch/_inductor/compile_fx.py", "compile_fx"),
    ("jax/_src/compiler.py", "compile_or_get_cached"),
    ("tensorflow/python/eager/polymorphic_function/polymorphic_function.py", "_initialize"),  # tf.function tracing
)


def cumulative(stats: pstats.Stats, path: str, name: str) -> float:
    return sum(v[3] for (file, _, func), v in stats.stats.items()  # type: ignore[attr-defined]
               if func == name and file.replace(os.sep, "/").endswith(path))


def worker_times(profile_dir: Path) -> dict[str, dict[str, float]]:
    """{backend: {import, compile, execute}} summed over its workers (restarts included)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for f in profile_dir.glob("worker-*.prof"):
        backend = f.name.removeprefix("worker-").rsplit("-", 2)[0]
        st = pstats.Stats(str(f))
        out[backend]["import"] += cumulative(st, "harness/execution/worker.py", "start_backend")
        out[backend]["execute"] += (cumulative(st, "harness/execution/worker.py", "execute")
                                    + cumulative(st, "harness/execution/grad_exec.py", "execute_gradients"))
        out[backend]["compile"] += sum(cumulative(st, p, n) for p, n in COMPILE)
        out[backend]["workers"] += 1
    return out


def one_run(files: list[str], backends: str, tier: str, cache: Path, tmp: Path, label: str, extra: list[str]) -> dict:
    prof_dir, out = tmp / f"prof-{label}", tmp / f"out-{label}"
    prof_dir.mkdir()
    env = {**os.environ, "CONVDIFF_CACHE": str(cache), "CONVDIFF_PROFILE": str(prof_dir)}
    ctrl = prof_dir / "controller.out"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(ctrl), "-m", "harness.commands.cli", "run", *files,
                           "--backends", backends, "--tier", tier, "--jobs", "1", "--out", str(out), *extra],
                          cwd=ROOT, env=env, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if not (out / "results.jsonl").exists():
        raise SystemExit(f"convdiff run wrote no results (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    counts: dict[str, int] = defaultdict(int)
    for line in (out / "results.jsonl").read_text().splitlines():
        counts[json.loads(line)["backend"].replace(":", "_")] += 1
    judge = cumulative(pstats.Stats(str(ctrl)), "harness/judge/verdict.py", "judge") if ctrl.exists() else 0.0
    return {"wall": wall, "workers": worker_times(prof_dir), "counts": counts, "judge": judge}


def oracle_seconds(files: list[str], tier: str, shard_spec: str | None) -> tuple[float, int]:
    """cProfile over `prepare` (inputs and oracles) of every selected case, in this process."""
    from harness.commands.cli import select_tier
    from harness.execution.runner import prepare
    from harness.model.loader import load_cases
    from harness.model.shard import parse_shard, shard

    cases = select_tier(load_cases(files), tier)
    if shard_spec:
        cases = shard(cases, *parse_shard(shard_spec))
    prof = cProfile.Profile()
    prof.runcall(lambda: [prepare(c) for c in cases])
    return cumulative(pstats.Stats(prof), "harness/execution/runner.py", "prepare"), len(cases)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default="torch,tensorflow,jax,onnxruntime,tvm,torch-onnx-ort,tf2onnx-ort")
    p.add_argument("--files", default="cases/conv2d.yaml")
    p.add_argument("--tier", default="full", choices=("smoke", "full"))
    p.add_argument("--shard", help="i/n: a cost-balanced share of the cases")
    p.add_argument("--compiled-sample", help="passed to convdiff run")
    args = p.parse_args(argv)
    files = args.files.split(",")
    extra = [*(["--shard", args.shard] if args.shard else []),
             *(["--compiled-sample", args.compiled_sample] if args.compiled_sample else [])]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        runs = {label: one_run(files, args.backends, args.tier, tmp / "cache", tmp, label, extra) for label in ("cold", "warm")}
    oracle, n_cases = oracle_seconds(files, args.tier, args.shard)
    print(f"where the time goes: {', '.join(files)} ({args.tier}{', shard ' + args.shard if args.shard else ''}, "
          f"{n_cases} cases), --jobs 1, cProfile")
    for label, run in runs.items():
        print(f"\n{label}: wall {run['wall']:.1f} s; controller judge {run['judge']:.1f} s")
        print(f"{'backend':<30} {'results':>7} {'workers':>7} {'import s':>9} {'compile s':>10} {'run s':>7} {'ms/case':>8}")
        for backend, t in sorted(run["workers"].items()):
            n = run["counts"].get(backend, 0)
            # a compile during the worker's start (a host probe) counts in compile too: run is floored at 0
            comp, rest = t["compile"], max(t["execute"] - t["compile"], 0.0)
            per = 1e3 * t["execute"] / n if n else 0.0
            print(f"{backend:<30} {n:>7} {int(t['workers']):>7} {t['import']:>9.1f} {comp:>10.1f} {rest:>7.1f} {per:>8.1f}")
    print(f"\ncontroller: inputs + float64 oracle of {n_cases} cases {oracle:.1f} s ({1e3 * oracle / max(n_cases, 1):.1f} ms/case)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
