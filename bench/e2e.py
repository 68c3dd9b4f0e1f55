"""`convdiff run` as users type it, timed as a whole process against the bare loop (part of `make bench`).

    python bench/e2e.py [--backends torch,...] [--repeats 3]

For each backend, and for all of them in one run: wall seconds of
  (a) `python bench/bare_loop.py BACKEND FILES`: one process, no isolation, no judging, no reports;
  (b) `convdiff run FILES --backends BACKEND --out TMP`: process start to exit, reports included;
run in turn (a b a b ...), medians, and b/a. "All together" compares one `convdiff run` over
every backend with the bare loops run one after another.

Then a per-case breakdown of the controller's work for the torch run, from a cProfile of
the same steps replayed in one thread (inputs, send = pickling the request, oracle,
compare, record), plus the framework call and the receive as the workers reported them.
"""

from __future__ import annotations

import argparse
import cProfile
import json
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


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - start


def side_by_side(backends: list[str], repeats: int) -> list[tuple[str, float, float]]:
    rows = []
    exe = str(Path(sys.executable).with_name("convdiff"))
    with tempfile.TemporaryDirectory() as tmp:
        for b in backends:
            bare, run = [], []
            for _ in range(repeats):
                bare.append(wall([sys.executable, "bench/bare_loop.py", b, *FILES]))
                run.append(wall([exe, "run", *FILES, "--backends", b, "--out", tmp]))
            rows.append((b, statistics.median(bare), statistics.median(run)))
        if len(backends) > 1:
            together = statistics.median(wall([exe, "run", *FILES, "--backends", ",".join(backends), "--out", tmp])
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
        subprocess.run([str(Path(sys.executable).with_name("convdiff")), "run", *FILES, "--backends", backend,
                        "--out", tmp], cwd=ROOT, check=False, capture_output=True)
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
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
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
