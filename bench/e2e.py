"""`convdiff run` as users type it, timed as a whole process against the bare loop (part of `make bench`).

    python bench/e2e.py [--backends torch,...] [--repeats 5] [--sweep bench/sweep620.yaml] [--corpus]

Side by side, each as a whole process (start to exit, reports included), run in turn (a b a b ...) so that a
drift in the machine's speed hits both, each ratio taken pair by pair and the median reported:
  the sweep: `convdiff run SWEEP --backends torch` against `python bench/bare_loop.py torch SWEEP`
    (bench/sweep620.yaml: 620 small cases, so what is timed is the fixed cost around the work);
  the quick start: `convdiff run cases/conv2d.yaml --backends torch` (the README's example) against
    `python -c "import torch"`, the floor no run of a torch case can go under;
  with --corpus, per backend and for all of them in one run: the forward corpus (cases/*.yaml) against
    the bare loops run one after another.
The command is `python -m harness.commands.launch`, what the `convdiff` console script runs.

Then a per-case breakdown of the controller's work for the torch run, from a cProfile of
the same steps replayed in one thread (inputs, send = pickling the request, oracle,
compare, record), plus the framework call and the receive as the workers reported them.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pickle
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The forward corpus: top-level case files (not gradients, extracted models or fuzz findings).
FILES = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "cases").glob("*.yaml"))
         if p.name not in ("known_issues.yaml", "gradients.yaml")]


CONVDIFF = [sys.executable, "-m", "harness.commands.launch"]


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - start


def paired(a: list[str], b: list[str], repeats: int) -> tuple[float, float, float, list[float]]:
    """a and b in turn, after one warm-up of each: (median a s, median b s, median of the pairs' a/b, the ratios)."""
    wall(a), wall(b)
    walls_a, walls_b = [], []
    for _ in range(repeats):
        walls_a.append(wall(a))
        walls_b.append(wall(b))
    ratios = [x / y for x, y in zip(walls_a, walls_b)]
    return statistics.median(walls_a), statistics.median(walls_b), statistics.median(ratios), ratios


def sweep_and_quick_start(sweep: str, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run, bare, ratio, ratios = paired([*CONVDIFF, "run", sweep, "--backends", "torch", "--out", tmp],
                                          [sys.executable, "bench/bare_loop.py", "torch", sweep], repeats)
        print(f"sweep {sweep}: convdiff run {run:.2f} s, bare loop {bare:.2f} s, ratio {ratio:.2f} "
              f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})")
        run, bare, ratio, ratios = paired([*CONVDIFF, "run", "cases/conv2d.yaml", "--backends", "torch", "--out", tmp],
                                          [sys.executable, "-c", "import torch"], repeats)
        print(f"quick start (cases/conv2d.yaml on torch, warm): {run:.2f} s; `import torch` alone {bare:.2f} s, "
              f"ratio {ratio:.2f}")
    print(f"(median of {repeats} pairs; 1-minute load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def side_by_side(backends: list[str], repeats: int) -> list[tuple[str, float, float]]:
    rows = []
    exe = CONVDIFF
    with tempfile.TemporaryDirectory() as tmp:
        for b in backends:
            bare, run = [], []
            for _ in range(repeats):
                bare.append(wall([sys.executable, "bench/bare_loop.py", b, *FILES]))
                run.append(wall([*exe, "run", *FILES, "--backends", b, "--out", tmp]))
            rows.append((b, statistics.median(bare), statistics.median(run)))
        if len(backends) > 1:
            together = statistics.median(wall([*exe, "run", *FILES, "--backends", ",".join(backends), "--out", tmp])
                                         for _ in range(repeats))
            rows.append(("all together", sum(r[1] for r in rows), together))
    return rows


def breakdown(backend: str = "torch") -> dict[str, float]:
    """Milliseconds per case for each step of the controller, and the workers' share."""
    from harness.execution.records import Record
    from harness.execution.runner import prepare
    from harness.model.loader import load_cases
    from harness.numerics.compare import compare

    cases = [c for c in load_cases(FILES) if c.expect == "valid" and c.geometry is not None]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*CONVDIFF, "run", *FILES, "--backends", backend, "--out", tmp], cwd=ROOT, check=False,
                       capture_output=True)
        recs = [json.loads(ln) for ln in (Path(tmp) / "results.jsonl").read_text().splitlines() if ln.strip()]
    framework_ms = 1e3 * sum(r["duration_s"] for r in recs) / max(1, len(recs))

    def send(message: object) -> object:  # what crosses the pipe each way, pickled and unpickled
        return pickle.loads(pickle.dumps(message))

    def receive(message: object) -> object:
        return pickle.loads(pickle.dumps(message))

    def replay() -> None:
        for case in cases:
            _, inputs, oracle, _ = prepare(case)
            send(("run", case, inputs))
            out = oracle[0].astype(case.dtype if case.dtype != "bfloat16" else "float32")
            receive({"status": "ok", "array": out})
            verdict = compare(case, out, case.dtype, oracle[0], oracle[1], False)
            Record(case_id=case.id, file=case.file, op=case.op, params=case.params(), backend=backend,
                   backend_version="x", device="cpu", dtype=case.dtype, status=verdict.status).to_json()

    prof = cProfile.Profile()
    prof.runcall(replay)
    stats = pstats.Stats(prof).stats  # {(file, line, func): (cc, nc, tt, ct, callers)}

    def cum(name: str, where: str) -> float:
        return 1e3 * sum(v[3] for k, v in stats.items() if k[2] == name and where in k[0]) / len(cases)

    return {"cases": len(cases), "inputs": cum("make_inputs", "inputs.py"), "oracle": cum("oracle_for", "runner.py"),
            "send (pickle)": cum("send", "e2e.py"), "receive (pickle)": cum("receive", "e2e.py"),
            "compare": cum("compare", "compare.py"), "record": cum("to_json", "records.py"),
            f"framework call ({backend} worker)": framework_ms}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", default="torch")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sweep", default="bench/sweep620.yaml")
    ap.add_argument("--corpus", action="store_true", help="also the forward corpus per backend (minutes)")
    args = ap.parse_args()
    sweep_and_quick_start(args.sweep, args.repeats)
    if args.corpus:
        print(f"end to end, {len(FILES)} case files, wall seconds (median of {args.repeats})")
        print(f"{'backend':<20}{'bare loop a':>12}{'convdiff run b':>16}{'b/a':>7}")
        for name, a, b in side_by_side(args.backends.split(","), args.repeats):
            print(f"{name:<20}{a:>12.2f}{b:>16.2f}{b / a:>7.2f}")
    parts = breakdown()
    print(f"per case, ms (controller steps from cProfile, {parts.pop('cases')} valid cases):")
    for k, v in parts.items():
        print(f"  {k:<28}{v:>8.3f}")


if __name__ == "__main__":
    main()
