"""A newcomer's first and second `make run`, and `make test`, timed side by side (part of `make bench`).

    python bench/fresh_clone.py [--skip-test] [--sample 16]

A fresh clone differs from this checkout only by its caches (the virtualenv is `make setup`'s, not
timed), so each step runs the Makefile's own command here with CONVDIFF_CACHE pointing to a new
empty directory, the state `rm -rf .convdiff-cache` leaves:

1. cold `make run` (`convdiff run --tier full --compiled-sample N`), wall seconds, and when its first
   record reached results.jsonl (the time to first verdict);
2. warm `make run`: the same again, caches kept (no export, conversion or compile should repeat);
3. cold `make test` (pytest with make test's arguments, its own empty cache).

Then, per backend, ms per result cold -> warm (the records' `duration_s`: the worker's time on the
case; a batched build's time is in its prepare, before the cases, and in the wall figures only),
and whether any status differs between the cold and the warm run (it must not); and where `make test`'s
time goes: the summed item time (setup, call, teardown, from pytest's JUnit XML) per test module and per
case target, largest first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from test_cost import MAKE_TEST  # bench/ is this script's directory, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
TEST_ARGS = MAKE_TEST  # make test's own arguments, its xdist processes from the Makefile


def timed(cmd: list[str], cache: Path, log: Path, first: Path | None = None) -> tuple[float, float | None]:
    """Wall seconds of `cmd`, and when `first` (a results file) first held a record: the time to first verdict."""
    env = {**os.environ, "CONVDIFF_CACHE": str(cache), "PYTHONDONTWRITEBYTECODE": ""}  # as make test runs it
    start = time.monotonic()
    seen = None
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            if seen is None and first is not None and first.exists() and first.stat().st_size:
                seen = time.monotonic() - start
            time.sleep(0.2)
    return time.monotonic() - start, seen


def records(out: Path) -> dict[tuple, tuple[str, float]]:
    got = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if "case_id" in r:
            got[(r["file"], r["case_id"], r["backend"], r["device"], r.get("output", "out"))] = (
                r["status"], r.get("duration_s") or 0.0)
    return got


def test_time_by_group(junit: Path) -> list[tuple[str, float, int]]:
    """Summed item seconds per test module (tests/...) or per case target (`...@<backend>-<device>`)."""
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for case in ET.parse(junit).iter("testcase"):
        name, cls = case.get("name", ""), case.get("classname", "")
        target = re.search(r"\[([^\]]+)\]", name)
        if cls.startswith("cases") and target:
            key = f"cases @ {target.group(1)}"
        else:  # tests.test_x or tests.test_x.TestClass -> tests.test_x
            parts = cls.split(".")
            key = ".".join(parts[:next((i + 1 for i, p in enumerate(parts) if p.startswith("test_")), len(parts))])
        groups[key][0] += float(case.get("time") or 0.0)
        groups[key][1] += 1
    return sorted(((k, t, int(n)) for k, (t, n) in groups.items()), key=lambda g: -g[1])


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=16, help="make run's SAMPLE (--compiled-sample)")
    ap.add_argument("--skip-test", action="store_true", help="time make run only")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="convdiff-fresh-"))
    run = [sys.executable, "-m", "harness.commands.cli", "run", "--tier", "full",
           "--compiled-sample", str(args.sample), "--out"]
    cold, cold_first = timed([*run, str(tmp / "cold")], tmp / "cache", tmp / "cold.log", tmp / "cold" / "results.jsonl")
    warm, warm_first = timed([*run, str(tmp / "warm")], tmp / "cache", tmp / "warm.log", tmp / "warm" / "results.jsonl")
    junit = tmp / "test.xml"
    test = None if args.skip_test else timed([sys.executable, "-m", "pytest", *TEST_ARGS, f"--junitxml={junit}"],
                                             tmp / "test-cache", tmp / "test.log")[0]
    a, b = records(tmp / "cold"), records(tmp / "warm")
    per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for key, (_, secs) in a.items():
        per[key[2]][0] += secs
        per[key[2]][1] += b.get(key, ("", 0.0))[1]
        per[key[2]][2] += 1
    changed = [k for k in a if k in b and a[k][0] != b[k][0]]
    print(f"make run (SAMPLE={args.sample}): cold {cold:.0f} s, warm {warm:.0f} s; {len(a)} results, "
          f"{len(changed)} statuses differ cold vs warm")
    print(f"  first record written after: cold {_secs(cold_first)}, warm {_secs(warm_first)}")
    if test is not None:
        tail = (tmp / "test.log").read_text().strip().splitlines()[-1:] or [""]
        inner = re.search(r"in ([0-9.]+)s", tail[0])
        print(f"make test: {test:.0f} s wall ({inner.group(1) if inner else '?'} s in pytest): {tail[0]}")
        if junit.exists():
            groups = test_time_by_group(junit)
            total = sum(t for _, t, _ in groups) or 1.0
            print(f"  item time {total:.0f} s over {len(groups)} groups; the largest:")
            for key, secs, n in groups[:20]:
                print(f"  {key:50s} {n:5d} items {secs:7.1f} s {100 * secs / total:5.1f}%")
    print(f"\n{'backend':34s} {'results':>7s} {'cold ms/result':>15s} {'warm ms/result':>15s}")
    for name, (c, w, n) in sorted(per.items(), key=lambda kv: -kv[1][0] / kv[1][2]):
        print(f"{name:34s} {n:7d} {1000 * c / n:15.0f} {1000 * w / n:15.0f}")
    print(f"\nlogs and records: {tmp}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
