"""The nightly's cost, per target and per shard, and the cost table `--shard` balances by (cases/shard_costs.json).

    python bench/shard_costs.py SHARD_DIR... [--write cases/shard_costs.json] [--shards 4] [--top 12]

Each SHARD_DIR is a `convdiff run --out` directory of one nightly shard (`convdiff run --shard i/4 --tier full
--gradients --relations all`): its results.jsonl and summary.json, and, where the run was timed by the
script that ran it, a `wall_s` file with its wall seconds. A case's cost is the duration_s of every record it
gave (forward, gradients and relations, on every target) plus, on a target that builds in batches
(summary.json's `builds`: Backend.prepare's seconds, in no record), an even share of that target's build
time over its cases that ran. Prints the cost per target (the most costly first: where a night's time goes),
per shard as run, and the shards the table gives (LPT over the recorded costs) beside those of the estimate
alone (harness/model/shard.py), each as its share of the largest; --write saves the table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.model.loader import load_cases  # noqa: E402
from harness.model.shard import COSTS, case_cost, case_key, case_macs, estimate, fit_line, shard  # noqa: E402


def read_shard(folder: Path) -> tuple[dict[str, float], dict[str, float], float | None, int]:
    """({case key: seconds}, {target: seconds}, the shard's wall seconds or None, its record count)."""
    records = [json.loads(ln) for ln in (folder / "results.jsonl").read_text().splitlines() if ln.strip()]
    summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").exists() else {}
    per_case: dict[str, float] = defaultdict(float)
    per_target: dict[str, float] = defaultdict(float)
    built: dict[str, list[str]] = defaultdict(list)  # target -> the cases it ran (a batched build's share goes to them)
    for r in records:
        if "case_id" not in r:
            continue
        key, target = f"{r['file']}::{r['case_id']}", f"{r['backend']}-{r['device']}"
        seconds = float(r.get("duration_s") or 0.0)
        per_case[key] += seconds
        per_target[target] += seconds
        if r.get("output", "out") == "out" and r["status"] != "unsupported":
            built[target].append(key)
    for target, report in summary.get("builds", {}).items():
        seconds, cases = float(report.get("seconds", 0.0)), built.get(target, [])
        per_target[target] += seconds
        for key in cases:
            per_case[key] += seconds / len(cases)
    wall_file = folder / "wall_s"
    wall = float(wall_file.read_text()) if wall_file.exists() else None
    return dict(per_case), dict(per_target), wall, len(records)


def loads(parts: list[list], seconds: dict[str, float], table: dict) -> list[float]:
    """Each part's recorded seconds (the estimate, scaled, where a case was not recorded)."""
    return [sum(seconds.get(case_key(c) or "", case_cost(c, table)) for c in p) for p in parts]


def spread(values: list[float]) -> str:
    top = max(values) or 1.0
    return ", ".join(f"{v:,.0f} s ({v / top:.0%})" for v in values) + f"; largest/smallest {top / max(min(values), 1e-9):.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shards", nargs="+", type=Path)
    ap.add_argument("--write", type=Path, help=f"write the cost table here (the committed one: {COSTS.relative_to(ROOT)})")
    ap.add_argument("--shards-count", type=int, default=4, dest="count")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--host", default="", help="the host, for the table's `measured` line")
    args = ap.parse_args(argv)
    seconds: dict[str, float] = {}
    targets: dict[str, float] = defaultdict(float)
    print(f"{'shard':<40}{'results':>9}{'worker s':>11}{'wall s':>9}")
    n_records = 0
    for folder in args.shards:
        per_case, per_target, wall, n = read_shard(folder)
        n_records += n
        for k, v in per_case.items():
            seconds[k] = seconds.get(k, 0.0) + v
        for k, v in per_target.items():
            targets[k] += v
        print(f"{str(folder)[-40:]:<40}{n:>9}{sum(per_target.values()):>11,.0f}{wall if wall is not None else float('nan'):>9,.0f}")
    total = sum(targets.values())
    print(f"\ncost per target ({total:,.0f} worker-s in all; the {args.top} most costly):")
    for target, s in sorted(targets.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {target:<36}{s:>10,.0f} s {s / total:>6.1%}")
    cases = load_cases([str(ROOT / "cases")])
    seen = [c for c in cases if case_key(c) in seconds]
    scale = sum(seconds[case_key(c)] for c in seen) / max(sum(estimate(c) for c in seen), 1.0)  # type: ignore[index]
    fixed, per_mac = fit_line([(case_macs(c), seconds[case_key(c)]) for c in seen])  # type: ignore[index]
    table = {"seconds": {k: round(v, 4) for k, v in sorted(seconds.items())}, "estimate_scale": scale,
             "fixed_s": round(fixed, 4), "per_mac_s": per_mac}
    print(f"\n{len(seen)} of the corpus' {len(cases)} cases recorded; an unrecorded case costs {fixed:,.1f} s + "
          f"{per_mac:.3e} s per multiply-add (the recorded cases' least-squares line)")
    by_estimate = [shard(cases, i, args.count, table={}) for i in range(1, args.count + 1)]
    by_table = [shard(cases, i, args.count, table=table) for i in range(1, args.count + 1)]
    print(f"{args.count} shards by the estimate alone: {spread(loads(by_estimate, seconds, table))}")
    print(f"{args.count} shards by the recorded costs:  {spread(loads(by_table, seconds, table))}")
    if args.write:
        table = {"about": "seconds of worker time per case (every target; forward, gradients, relations; batched builds "
                 "spread over their cases), for --shard (harness/model/shard.py); written by bench/shard_costs.py",
                 "measured": f"{date.today().isoformat()}, {args.host or os.uname().nodename}, {n_records} results of "
                 f"{len(args.shards)} shard(s)", **table}
        args.write.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
