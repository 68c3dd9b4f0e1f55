"""convdiff's overhead, measured side by side in one run (`make bench`).

Per backend (and for all of them together), on the same cases:
  (a) floor  - one process: import the framework once, then for each case make the
               inputs, call the framework through its adapter and compute the two
               float64 oracle convolutions (output and scale). No isolation at all.
  (b) convdiff - `run_cases` with warm isolated workers, as `convdiff run` does.
  (c) naive  - a fresh Python process per case (import + call + exit), timed on a
               sample and scaled to the corpus.
Prints b/a and c/b, and (g) the same convdiff run with `gradients: true` on every case
(forward + grad_input + grad_weight + grad_bias, each judged), with g/b: a gradient case's
cost against its forward case, end to end (target <= 3). Also: the full run with TVM's compile cache off, cold and then warm
(side by side), and the oracle's time against torch float64 on the same convolutions.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.execution.records import JsonlSink  # noqa: E402
from harness.execution.runner import run_cases  # noqa: E402
from harness.judge.verdict import Verdicts  # noqa: E402
from harness.model.case import Case  # noqa: E402
from harness.model.loader import load_cases  # noqa: E402

FLOOR_SCRIPT = """
import pickle, sys, time
t0 = time.perf_counter()
from backends.registry import get_backend
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference
cases = pickle.load(open(sys.argv[1], "rb"))
from harness.judge.known_issues import load_known_issues
backend = get_backend(sys.argv[2]); backend.setup("cpu")
known = load_known_issues("cases/known_issues.yaml")
for case in cases:
    inputs = make_inputs(case)
    # a bare loop cannot survive a known crash (paddle2onnx aborts the process): it must skip the case
    crash = [e for e in known.candidates(case, sys.argv[2], "cpu") if "crash" in e.status]
    if backend.supports(case, "cpu") is None and not crash:
        try:
            backend.run(case, inputs, "cpu")
        except Exception:
            pass
    reference(case, inputs.x, inputs.w, inputs.b)
print(time.perf_counter() - t0)
"""


ORACLE_VS_TORCH = """
import pickle, sys, time
import numpy as np, torch
import torch.nn.functional as F
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference
from backends.torch.eager import TorchBackend
cases = [c for c in pickle.load(open(sys.argv[1], "rb"))]
tb = TorchBackend(); tb.setup("cpu")
data = [(c, make_inputs(c)) for c in cases]
t0 = time.perf_counter()
for c, i in data:
    reference(c, i.x, i.w, i.b)
t_oracle = time.perf_counter() - t0
t0 = time.perf_counter()
for c, i in data:
    kw, pre, crop, _ = tb.translate(c)
    x = torch.from_numpy(np.asarray(i.x, np.float64))
    x = x.movedim(-1, 1) if c.channels_last else x
    w = torch.from_numpy(np.asarray(i.w, np.float64))
    b = None if i.b is None else torch.from_numpy(np.asarray(i.b, np.float64))
    if pre:
        x = F.pad(x, [v for p in reversed(pre) for v in p])
    getattr(F, f"{c.family}{c.rank}d")(x, w, b, **kw)
    getattr(F, f"{c.family}{c.rank}d")(x.abs(), w.abs(), None if b is None else b.abs(), **kw)
print(t_oracle, time.perf_counter() - t0)
"""

TVM_BACKENDS = ("tvm", "tvm-torch-import", "tvm-onnx-import", "tvm-onnx-import-output-shape", "tvm-tflite-import")
ONNX_BACKENDS = ("onnxruntime", "openvino", "torch-onnx-ort", "tf2onnx-ort", "paddle2onnx-ort")


def corpus(min_cases: int, files: list[str] | None = None) -> list[Case]:
    """The valid cases of cases/ (or of the named files in it), repeated with new seeds until there are
    at least min_cases."""
    paths = [ROOT / "cases" / f for f in files] if files else [ROOT / "cases"]
    base = [c for c in load_cases(paths) if c.expect == "valid"]
    out, rep = list(base), 1
    while len(out) < min_cases:
        out += [dataclasses.replace(c, id=f"{c.id}#{rep}", seed=c.seed + rep) for c in base]
        rep += 1
    return out


def floor_time(cases: list[Case], backend: str) -> float:
    import pickle

    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as fh:
        pickle.dump(cases, fh)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR_SCRIPT, fh.name, backend], check=True, cwd=ROOT,
                   capture_output=True)
    return time.perf_counter() - start


def convdiff_time(cases: list[Case], backends: list[str], jobs: int) -> tuple[float, dict[str, int]]:
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sink = JsonlSink(Path(tmp) / "results.jsonl")

        def collect(rec) -> None:
            sink(rec)
            counts[rec.status] = counts.get(rec.status, 0) + 1

        start = time.perf_counter()
        run_cases(cases, [(b, "cpu") for b in backends], collect, Verdicts(), timeout=300, jobs=jobs)
        elapsed = time.perf_counter() - start
        sink.close()
    return elapsed, counts


def naive_time(cases: list[Case], backend: str, sample: int) -> float:
    """Seconds per case with a fresh process each, on `sample` cases, scaled to all of them."""
    import pickle

    picked = cases[:: max(1, len(cases) // sample)][:sample]
    start = time.perf_counter()
    for case in picked:
        with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as fh:
            pickle.dump([case], fh)
        subprocess.run([sys.executable, "-c", FLOOR_SCRIPT, fh.name, backend], check=True, cwd=ROOT,
                       capture_output=True)
    return (time.perf_counter() - start) / len(picked) * len(cases)


def oracle_vs_torch(cases: list[Case]) -> tuple[float, float]:
    """Seconds for the oracle (output + scale) and for torch float64 doing the same two convolutions."""
    import pickle

    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as fh:
        pickle.dump(cases, fh)
    out = subprocess.run([sys.executable, "-c", ORACLE_VS_TORCH, fh.name], check=True, cwd=ROOT,
                         capture_output=True, text=True)
    t_oracle, t_torch = map(float, out.stdout.split())
    return t_oracle, t_torch


def row(name: str, a: float, b: float, c: float | None, counts: dict[str, int], g: float | None = None) -> str:
    status = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
    cc = f"{c:>14.1f}{c / b:>8.1f}" if c is not None else f"{'-':>14}{'-':>8}"
    gg = f"{g:>10.2f}{g / b:>6.2f}" if g is not None else f"{'-':>10}{'-':>6}"
    return f"{name:<30}{a:>10.2f}{b:>14.2f}{cc}{b / a:>8.2f}{gg}  {status}"


def with_gradients(cases: list[Case]) -> list[Case]:
    return [dataclasses.replace(c, gradients=True) for c in cases]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default=",".join(["torch", "tensorflow", "tensorflow-keras", "paddle",
                                                  "paddle-output-size", "jax", *TVM_BACKENDS, *ONNX_BACKENDS]))
    ap.add_argument("--cases", type=int, default=0, help="minimum corpus size (the corpus is repeated with new seeds)")
    ap.add_argument("--files", default="", help="comma-separated case files under cases/ (default: all of cases/); "
                    "for backends too slow to bench over the whole corpus in one sitting")
    ap.add_argument("--naive-sample", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    backends = args.backends.split(",")
    files = [f for f in args.files.split(",") if f]
    cases = corpus(args.cases, files)
    print(f"{len(cases)} cases{' from ' + ', '.join(files) if files else ''}; jobs={args.jobs}; cpu")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CONVDIFF_CACHE"] = cache  # workers and floors inherit it: cold first, then warm
        if any(b in TVM_BACKENDS for b in backends):  # the full run, side by side: cache off, cold, warm
            os.environ["CONVDIFF_CACHE"] = "off"
            off, _ = convdiff_time(cases, backends, args.jobs)
            os.environ["CONVDIFF_CACHE"] = cache
            cold, _ = convdiff_time(cases, backends, args.jobs)
            warm, _ = convdiff_time(cases, backends, args.jobs)
            print(f"full run, all {len(backends)} backends: compile cache off {off:.1f} s, cold {cold:.1f} s "
                  f"({cold / off:.2f}x off), warm {warm:.1f} s ({cold / warm:.1f}x faster than cold); "
                  "the rows below run warm")
        print(f"{'backend':<30}{'floor a':>10}{'convdiff b':>14}{'naive c':>14}{'c/b':>8}{'b/a':>8}"
              f"{'grad g':>10}{'g/b':>6}  statuses (seconds)")
        floors = 0.0
        for backend in backends:
            a = floor_time(cases, backend)
            floors += a
            b, counts = convdiff_time(cases, [backend], args.jobs)
            c = naive_time(cases, backend, args.naive_sample)
            g, _ = convdiff_time(with_gradients(cases), [backend], args.jobs)
            print(row(backend, a, b, c, counts, g), flush=True)
        if len(backends) > 1:
            b, counts = convdiff_time(cases, backends, args.jobs)
            print(row("all together (a = sum)", floors, b, None, counts))
    t_oracle, t_torch = oracle_vs_torch(cases)
    print(f"oracle (NumPy float64, output + scale) {t_oracle:.2f} s vs torch float64 (same two convolutions) "
          f"{t_torch:.2f} s: {t_oracle / t_torch:.2f}x")
    print(f"(naive c is timed on {args.naive_sample} cases with a fresh process each and scaled to the corpus)")


if __name__ == "__main__":
    main()
