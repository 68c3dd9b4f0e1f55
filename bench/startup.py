"""Where a small `convdiff run`'s fixed cost goes: a timeline of one run, step by step (part of `make bench`).

    python bench/startup.py [--backends torch] [--repeats 3] [CASES...]      (default: cases/conv2d.yaml)

Runs `convdiff run CASES --backends B` in a process of its own with the steps of the run path wrapped
(nothing in convdiff changes): each step's start and end on the process's clock, from the moment the
kernel created the process (so the interpreter's own start and convdiff's imports are in the first
step), and the CPU seconds the controller spent. Steps: imports (the interpreter and convdiff's modules),
cases (load and expand), known issues, the template's import (the zygote: asked for, then ready), the
first worker (forked and greeted), the first and the last record, the reports (summary.json,
junit.xml, report.html) and the exit. Prints the median of each over the repeats, with the framework's
own import time in a bare process (`python -c "import FRAMEWORK"`) beside it: the floor a run cannot
go under.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the measured process: wraps the run path's steps, then runs the CLI as `convdiff` does.
PROBE = r"""
import json, os, sys, time
def since_start():
    with open("/proc/self/stat") as fh:
        started = int(fh.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    with open("/proc/uptime") as fh:
        return float(fh.read().split()[0]) - started
T0 = time.perf_counter() - since_start()   # the process's creation on this clock
marks = []
def mark(name):
    marks.append((name, time.perf_counter() - T0, time.process_time()))
mark("interpreter")
from harness.commands import launch  # what the `convdiff` command runs first
early = launch.early_backends(sys.argv[1:])
if early:
    from harness.execution.preloads import prestart
    mark("template asked (early): start")
    prestart(early)
    mark("template asked (early): end")
from harness.commands import cli
mark("imports")
import harness.commands.run_outputs as ro
from harness.execution import runner, pool, zygote
def wrap(mod, name, label, once=False):
    fn = getattr(mod, name)
    seen = []
    def wrapped(*a, **k):
        first = not seen
        seen.append(1)
        if first or not once:
            mark(label + ": start")
        try:
            return fn(*a, **k)
        finally:
            if first or not once:
                mark(label + ": end")
    setattr(mod, name, wrapped)
wrap(cli, "load_cases", "cases")
wrap(cli, "known_issues_for", "known issues")
wrap(cli, "prestart", "template asked")
wrap(runner, "run_cases", "run_cases")
wrap(zygote.Zygote, "ready", "template ready", once=True)
wrap(pool.Worker, "launch", "first worker", once=True)
wrap(cli, "write_run_outputs", "outputs")
wrap(ro, "write_summary", "summary.json")
import reports.junit, reports.html
wrap(reports.junit, "write_junit", "junit.xml")
wrap(reports.html, "write_html", "report.html")
orig_collect = cli.Progress.update
def update(self, *a, **k):
    if not any(m[0] == "first record" for m in marks):
        mark("first record")
    return orig_collect(self, *a, **k)
cli.Progress.update = update
orig_close = cli.Progress.close
def close(self):
    mark("last record")
    return orig_close(self)
cli.Progress.close = close
try:
    code = cli.main(sys.argv[1:])
finally:
    mark("exit")
    with open(os.environ["STARTUP_MARKS"], "w") as fh:
        json.dump(marks, fh)
sys.exit(code)
"""

ORDER = ["interpreter", "template asked (early): start", "template asked (early): end", "imports", "cases: start", "cases: end", "template asked: start", "known issues: start", "known issues: end",
         "template ready: start", "template ready: end", "first worker: start",
         "first worker: end", "first record", "last record", "outputs: start",
         "summary.json: start", "summary.json: end", "junit.xml: start", "junit.xml: end", "report.html: start",
         "report.html: end", "outputs: end", "exit"]


def one(cases: list[str], backends: str, out: Path) -> tuple[dict[str, tuple[float, float]], float]:
    marks_file = out / "marks.json"
    env = {**os.environ, "STARTUP_MARKS": str(marks_file)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", PROBE, "run", *cases, "--backends", backends, "--out", str(out / "o")],
                   cwd=ROOT, env=env, check=False, capture_output=True)
    wall = time.perf_counter() - start
    got = {}
    for name, t, cpu in json.loads(marks_file.read_text()):
        got.setdefault(name, (t, cpu))
    return got, wall


def framework_import(module: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", default=["cases/conv2d.yaml"])
    ap.add_argument("--backends", default="torch")
    ap.add_argument("--framework", default="torch", help="the module whose bare import is the floor")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    runs, walls, floors = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            floors.append(framework_import(args.framework))
            got, wall = one(args.cases, args.backends, Path(tmp))
            runs.append(got)
            walls.append(wall)
    print(f"convdiff run {' '.join(args.cases)} --backends {args.backends}: wall {statistics.median(walls):.2f} s "
          f"(median of {args.repeats}; runs {', '.join(f'{w:.2f}' for w in walls)}); bare `import {args.framework}` "
          f"{statistics.median(floors):.2f} s; 1-minute load {os.getloadavg()[0]:.1f}")
    print(f"{'step':<32}{'at s':>8}{'controller cpu s':>18}")
    for name in ORDER:
        seen = [r[name] for r in runs if name in r]
        if seen:
            print(f"{name:<32}{statistics.median(t for t, _ in seen):>8.2f}{statistics.median(c for _, c in seen):>18.2f}")
    print(f"{'process gone (as its parent saw)':<32}{statistics.median(walls):>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
