"""What each test module of `make test` costs: wall and CPU seconds per module, per xdist group, per case target.

    python bench/test_cost.py [--cold] [--serial] [--out DIR] [-- PYTEST_ARGS...]
    python bench/test_cost.py --summarize --out DIR       # the tables again, from the rows kept in DIR

Runs pytest with make test's arguments and environment (or PYTEST_ARGS) and this file as a plugin
(`-p test_cost`), which records for every test item its wall seconds and the CPU seconds of the pytest
process and all its descendants (/proc: the live ones' own and reaped children's time, and this process's
reaped children), so a test that starts workers, scripts or nested pytest runs is charged for them; and, per
pytest process, what it spent before its first item (start and collection). Load on a shared host stretches
wall time; CPU time moves far less. Then prints, largest first: per test module (per case file and target
for cases/), per case target, per xdist group, and an estimate of the session's wall time on a quiet host:
xdist's `--dist loadgroup` replayed over the items in collection order with their CPU seconds as their
duration (a group is one unit of work on one process; a process takes the next unit when it has at most two
items left), plus each process's start. The largest group is a floor for that estimate.

--cold runs with CONVDIFF_CACHE in a new empty directory, as a fresh clone does (TVM, inductor, IREE and
ExecuTorch then compile what the shared cache already holds). --serial runs without xdist (-p no:xdist): one
process, so the CPU of templates shared between tests is charged to the first test that needed them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def make_jobs() -> int:
    """make test's xdist processes: the Makefile's `JOBS ?= N`."""
    found = re.search(r"^JOBS\s*\?=\s*(\d+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    return int(found.group(1)) if found else 2


MAKE_TEST = ["tests", "cases", "--convdiff-tier", "smoke", "-n", str(make_jobs()), "--dist", "loadgroup",
             "--no-loadscope-reorder", "-q"]
OUT_ENV = "CONVDIFF_TEST_COST_OUT"
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of the live descendants of `pid` (their own and their reaped children's), not pid's own."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            kids = [int(k) for t in os.listdir(f"/proc/{p}/task")
                    for k in Path(f"/proc/{p}/task/{t}/children").read_text().split()]
        except OSError:
            continue
        for k in kids:
            try:
                fields = Path(f"/proc/{k}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(v) for v in fields[11:15]) / TICK  # utime stime cutime cstime
            todo.append(k)
    return total


def own_cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def cpu_now() -> float:
    return own_cpu() + tree_cpu(os.getpid())


# --- the plugin (loaded in every pytest process, xdist workers included, by -p test_cost) ---

_ROWS: list[dict[str, Any]] = []
_START: dict[str, float] = {}


def _group(item: Any) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return ""
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", ""))


def _plain_id(item: Any) -> str:
    group = _group(item)
    return item.nodeid.removesuffix(f"@{group}") if group else item.nodeid  # xdist's loadgroup appends "@group"


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def pytest_configure(config: Any) -> None:
    _START.update(wall=time.perf_counter(), cpu=cpu_now())


def pytest_collection_finish(session: Any) -> None:
    out = os.environ.get(OUT_ENV)
    if out and _worker() in ("gw0", "main"):  # every xdist process collects the same items in the same order
        order = [{"nodeid": _plain_id(i), "group": _group(i)} for i in session.items]
        Path(out, "order.json").write_text(json.dumps(order))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    out = os.environ.get(OUT_ENV)
    if not out:
        yield
        return
    if not _ROWS:  # this process's start and collection, up to its first item
        _START.update(first_wall=time.perf_counter() - _START["wall"], first_cpu=cpu_now() - _START["cpu"])
    wall, cpu = time.perf_counter(), cpu_now()
    yield
    row = {"nodeid": _plain_id(item), "group": _group(item), "wall": time.perf_counter() - wall, "cpu": cpu_now() - cpu}
    name = f"{_worker()}-{os.getpid()}"
    if not _ROWS:
        Path(out, f"start-{name}.json").write_text(json.dumps(
            {"worker": _worker(), "wall": _START["first_wall"], "cpu": _START["first_cpu"]}))
    _ROWS.append(row)
    with Path(out, f"items-{name}.jsonl").open("a") as f:  # as it goes: a run stopped early keeps its rows
        f.write(json.dumps(row) + "\n")


# --- the driver ---

def module_of(nodeid: str) -> str:
    """tests/test_x.py, or for a case item `cases/conv2d.yaml [torch-cpu]`."""
    path = nodeid.split("::", 1)[0]
    if path.endswith(".yaml") and nodeid.endswith("]"):
        return f"{path} [{nodeid.rsplit('[', 1)[1]}"
    return path


def target_of(nodeid: str) -> str:
    return nodeid.rsplit("[", 1)[1].rstrip("]") if nodeid.split("::", 1)[0].endswith(".yaml") else ""


def table(title: str, sums: dict[str, list[float]], top: int) -> str:
    lines = [f"{title:<58}{'items':>6}{'wall s':>9}{'cpu s':>9}"]
    for key, (n, wall, cpu) in sorted(sums.items(), key=lambda kv: -kv[1][2])[:top]:
        lines.append(f"{key[:58]:<58}{int(n):>6}{wall:>9.1f}{cpu:>9.1f}")
    return "\n".join(lines)


def replay_loadgroup(order: list[dict[str, Any]], cost: dict[str, float], workers: int = 2) -> list[float]:
    """Each process's busy seconds under xdist's --dist loadgroup --no-loadscope-reorder (xdist 3.8's
    LoadScopeScheduling): work units in collection order, a group one unit and an ungrouped item one unit
    each; every process is handed one unit, then another while it has at most two items pending, and each
    time it finishes an item with at most two pending it is handed the next unit."""
    units: dict[str, list[float]] = {}
    for it in order:
        units.setdefault(it["group"] or f"item {it['nodeid']}", []).append(cost.get(it["nodeid"], 0.0))
    queue = list(units.values())
    pending: list[list[float]] = [[] for _ in range(workers)]
    clock = [0.0] * workers

    def hand(w: int) -> None:
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.pop(0))

    for w in range(workers):
        hand(w)
    for w in range(workers):
        hand(w)
    while any(pending):
        w = min((w for w in range(workers) if pending[w]), key=lambda w: clock[w] + pending[w][0])
        clock[w] += pending[w].pop(0)
        hand(w)  # a process is left without items only once the queue is empty
    return clock


def summarize(out: Path, top: int) -> str:
    rows = [json.loads(ln) for f in sorted(out.glob("items-*.jsonl")) for ln in f.read_text().splitlines()]
    # A long-lived descendant that ends without being reaped into this tree (a template, a warm worker) takes
    # the CPU it had accrued, and charged to earlier items, out of the sum: that item's difference is negative.
    vanished = sum(r["cpu"] for r in rows if r["cpu"] < 0)
    for r in rows:
        r["cpu"] = max(0.0, r["cpu"])
    by: dict[str, dict[str, list[float]]] = {k: defaultdict(lambda: [0, 0.0, 0.0]) for k in ("module", "group", "target")}
    for r in rows:
        keys = {"module": module_of(r["nodeid"]), "group": r["group"] or f"(none) {r['nodeid'].split('::')[0]}",
                "target": target_of(r["nodeid"]) or "(tests/)"}
        for kind, key in keys.items():
            acc = by[kind][key]
            acc[0] += 1
            acc[1] += r["wall"]
            acc[2] += r["cpu"]
    total_wall, total_cpu = sum(r["wall"] for r in rows), sum(r["cpu"] for r in rows)
    parts = [f"{len(rows)} items: item wall {total_wall:.1f} s, item cpu {total_cpu:.1f} s (negative differences, "
             f"{vanished:.1f} s in all, counted as 0)",
             table("per module (case files per target)", by["module"], top),
             table("per case target", by["target"], top),
             table("per xdist group (ungrouped: per file)", by["group"], top)]
    starts = [json.loads(f.read_text()) for f in sorted(out.glob("start-*.json"))]
    order_file = out / "order.json"
    if order_file.exists():
        order = json.loads(order_file.read_text())
        start_cpu = max((s["cpu"] for s in starts), default=0.0)
        lines = [f"--dist loadgroup replayed over {len(order)} items in collection order, 2 processes (the cores) "
                 f"(start and collection before the first item: cpu {start_cpu:.1f} s, wall "
                 f"{max((s['wall'] for s in starts), default=0.0):.1f} s, the largest of the processes)"]
        for kind in ("cpu", "wall"):
            clock = replay_loadgroup(order, {r["nodeid"]: r[kind] for r in rows})
            lines.append(f"  items' {kind} seconds as durations: processes busy "
                         f"{', '.join(f'{c:.1f}' for c in clock)} s; estimated session "
                         f"{start_cpu + max(clock):.1f} s")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="", help="keep the per-item rows here (default: a temporary directory)")
    ap.add_argument("--serial", action="store_true", help="one process (-p no:xdist)")
    ap.add_argument("--cold", action="store_true", help="an empty CONVDIFF_CACHE, as on a fresh clone")
    ap.add_argument("--top", type=int, default=60)
    ap.add_argument("--summarize", action="store_true", help="only print the summary of the rows already in --out")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args(argv)

    out = Path(args.out or tempfile.mkdtemp(prefix="test-cost-"))
    out.mkdir(parents=True, exist_ok=True)
    if not args.summarize:
        pytest_args = args.pytest_args or MAKE_TEST
        if args.serial:
            pytest_args = [a for a in pytest_args if a not in ("--no-loadscope-reorder",)]
            for opt in ("-n", "--dist"):
                if opt in pytest_args:
                    i = pytest_args.index(opt)
                    del pytest_args[i:i + 2]
            pytest_args = [*pytest_args, "-p", "no:xdist"]
        env = {**os.environ, OUT_ENV: str(out), "PYTHONDONTWRITEBYTECODE": "",  # as make test runs it
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "bench"), os.environ.get("PYTHONPATH")]))}
        cache = Path(tempfile.mkdtemp(prefix="test-cost-cache-")) if args.cold else None
        if cache is not None:
            env["CONVDIFF_CACHE"] = str(cache)
        start, cpu0 = time.perf_counter(), own_cpu()
        try:
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "test_cost", *pytest_args], cwd=ROOT,
                                  env=env, check=False, capture_output=True, text=True)
        finally:
            if cache is not None:
                shutil.rmtree(cache, ignore_errors=True)
        wall, cpu = time.perf_counter() - start, own_cpu() - cpu0
        (out / "pytest.log").write_text(done.stdout + done.stderr)
        tail = (done.stdout.strip().splitlines() or [""])[-1]
        print(f"pytest {' '.join(pytest_args)}{' (empty cache)' if args.cold else ''}: exit {done.returncode}, "
              f"wall {wall:.1f} s, cpu of reaped processes {cpu:.1f} s, 1-minute load at the end "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {tail}")
    print(summarize(out, args.top))
    print(f"(rows in {out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
