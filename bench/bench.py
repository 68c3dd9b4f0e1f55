"""convdiff's overhead, measured side by side in one run (`make bench`).

Per backend, on the same cases:
  (a) floor  - one process: import the framework once, then for each case make the
               inputs, call the framework through its adapter and compute the two
               float64 oracle convolutions (output and scale). No isolation at all.
  (b) convdiff - `run_cases` with warm isolated workers, as `convdiff run` does.
  (c) naive  - a fresh Python process per case (import + call + exit), timed on a
               sample and scaled to the corpus.
Prints b/a (target <= 1.5 for torch) and c/b.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.case import Case  # noqa: E402
from harness.loader import load_cases  # noqa: E402
from harness.records import JsonlSink  # noqa: E402
from harness.runner import run_cases  # noqa: E402

FLOOR_SCRIPT = """
import pickle, sys, time
t0 = time.perf_counter()
from backends.registry import get_backend
from harness.inputs import make_inputs
from harness.oracle import reference
cases = pickle.load(open(sys.argv[1], "rb"))
backend = get_backend(sys.argv[2]); backend.setup("cpu")
for case in cases:
    inputs = make_inputs(case)
    if backend.supports(case, "cpu") is None:
        try:
            backend.run(case, inputs, "cpu")
        except Exception:
            pass
    reference(case, inputs.x, inputs.w, inputs.b)
print(time.perf_counter() - t0)
"""


def corpus(min_cases: int) -> list[Case]:
    """The valid cases of cases/, repeated with new seeds until there are at least min_cases."""
    base = [c for c in load_cases([ROOT / "cases"]) if c.expect == "valid"]
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


def convdiff_time(cases: list[Case], backend: str, jobs: int) -> tuple[float, dict[str, int]]:
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sink = JsonlSink(Path(tmp) / "results.jsonl")

        def collect(rec) -> None:
            sink(rec)
            counts[rec.status] = counts.get(rec.status, 0) + 1

        start = time.perf_counter()
        run_cases(cases, [(backend, "cpu")], collect, timeout=300, jobs=jobs)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default="torch")
    ap.add_argument("--cases", type=int, default=600, help="minimum corpus size")
    ap.add_argument("--naive-sample", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    cases = corpus(args.cases)
    print(f"{len(cases)} cases; jobs={args.jobs}")
    print(f"{'backend':<22}{'floor a (s)':>12}{'convdiff b (s)':>16}{'naive c (s)':>14}{'b/a':>8}{'c/b':>8}  statuses")
    for backend in args.backends.split(","):
        a = floor_time(cases, backend)
        b, counts = convdiff_time(cases, backend, args.jobs)
        c = naive_time(cases, backend, args.naive_sample)
        status = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
        print(f"{backend:<22}{a:>12.2f}{b:>16.2f}{c:>14.1f}{b / a:>8.2f}{c / b:>8.1f}  {status}")
    print(f"(c is timed on {args.naive_sample} cases with a fresh process each and scaled to the corpus)")


if __name__ == "__main__":
    main()
