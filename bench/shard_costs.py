"""The nightly's cost, per target and per shard, and the cost table `--shard` balances by (cases/shard_costs.json).

    python bench/shard_costs.py SHARD_DIR... [--cold DIR]... [--pair COLD_DIR WARM_DIR]...
                                [--write cases/shard_costs.json] [--shards-count 4] [--top 12]
    python bench/shard_costs.py --check-pairs --pair COLD_DIR WARM_DIR --pair COLD_DIR WARM_DIR...

Each SHARD_DIR is a `convdiff run --out` directory of one nightly shard (`convdiff run --shard i/4 --tier full
--gradients --relations all`) run with its compile cache kept, as the nightly runs: its results.jsonl and
summary.json, and, where the run was timed by the script that ran it, a `wall_s` file with its wall seconds. A
case's cost is the duration_s of every record it gave (forward, gradients and relations, on every target) plus,
on a target that builds in batches (summary.json's `builds`: Backend.prepare's seconds, in no record), an even
share of that target's build time over its cases that ran. Prints the cost per target (the most costly first:
where a night's time goes), per shard as run, and the shards the table gives (LPT over the recorded costs)
beside those of the estimate alone (harness/model/shard.py), each as its share of the largest; --write saves
the table.

A shard run from an empty cache (`--cold DIR`) costs what a first night costs: its builds dominate. Its cases
enter the table at what they would cost warm: each record's seconds times its target's warm/cold ratio for that
kind of result (forward, gradients, each relation), and each target's batched builds times its own, the ratios
taken from shards run both ways (`--pair COLD_DIR WARM_DIR`; a kind no pair has takes the pairs' overall ratio).
Predicting one warm quarter of the corpus from its cold run by the other quarter's ratios (2026-12-01, 2-core AMD
EPYC Zen 5) put each case within 4.0 to 5.2 s of its warm cost on average, where the least-squares line of the
warm cases missed by 8.3 to 9.8 s (`--check-pairs` prints this for the pairs given). A case recorded warm keeps
its recorded cost.
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

Records = dict[tuple[str, str, str], float]  # (case key, target, kind of result) -> seconds


def kind(output: str) -> str:
    """A record's kind for the warm/cold ratios: the forward output, a gradient, or the relation it judges."""
    return output if output.startswith("relation:") else "out" if output == "out" else "gradient"


def read_records(folder: Path) -> tuple[Records, dict[str, float], dict[str, list[str]], float | None, int]:
    """(record seconds by case, target and kind; build seconds by target; the cases each target ran (a batched
    build's share goes to them); the shard's wall seconds or None; its record count)."""
    lines = [json.loads(ln) for ln in (folder / "results.jsonl").read_text().splitlines() if ln.strip()]
    summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").exists() else {}
    records: Records = defaultdict(float)
    built: dict[str, list[str]] = defaultdict(list)
    for r in lines:
        if "case_id" not in r:
            continue
        key, target = f"{r['file']}::{r['case_id']}", f"{r['backend']}-{r['device']}"
        records[(key, target, kind(r.get("output", "out")))] += float(r.get("duration_s") or 0.0)
        if r.get("output", "out") == "out" and r["status"] != "unsupported":
            built[target].append(key)
    builds = {t: float(b.get("seconds", 0.0)) for t, b in summary.get("builds", {}).items()}
    wall_file = folder / "wall_s"
    wall = float(wall_file.read_text()) if wall_file.exists() else None
    return dict(records), builds, dict(built), wall, len(lines)


Ratios = tuple[dict[tuple[str, str], float], dict[str, float], float]  # (target, kind) ratios, build ratios, overall


def warm_ratios(pairs: list[tuple[Path, Path]]) -> Ratios:
    """Warm over cold seconds per (target, kind) and per target's builds, summed over the pairs' shards."""
    cold: dict[tuple[str, str], float] = defaultdict(float)
    warm: dict[tuple[str, str], float] = defaultdict(float)
    bcold: dict[str, float] = defaultdict(float)
    bwarm: dict[str, float] = defaultdict(float)
    for cold_dir, warm_dir in pairs:
        for sums, bsums, folder in ((cold, bcold, cold_dir), (warm, bwarm, warm_dir)):
            records, builds, *_ = read_records(folder)
            for (_, target, k), s in records.items():
                sums[(target, k)] += s
            for target, s in builds.items():
                bsums[target] += s
    overall = (sum(warm.values()) + sum(bwarm.values())) / max(sum(cold.values()) + sum(bcold.values()), 1e-9)
    return ({tk: warm[tk] / s for tk, s in cold.items() if s > 0}, {t: bwarm[t] / s for t, s in bcold.items() if s > 0},
            overall)


def costs(records: Records, builds: dict[str, float], built: dict[str, list[str]],
          ratios: Ratios | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """({case key: seconds}, {target: seconds}), converted to warm by `ratios` where given."""
    per, bper, overall = ratios if ratios is not None else ({}, {}, 1.0)
    per_case: dict[str, float] = defaultdict(float)
    per_target: dict[str, float] = defaultdict(float)
    for (key, target, k), s in records.items():
        s *= per.get((target, k), overall)
        per_case[key] += s
        per_target[target] += s
    for target, s in builds.items():
        s *= bper.get(target, overall)
        per_target[target] += s
        for key in built.get(target, []):
            per_case[key] += s / len(built[target])
    return dict(per_case), dict(per_target)


def loads(parts: list[list], seconds: dict[str, float], table: dict) -> list[float]:
    """Each part's recorded seconds (the estimate, scaled, where a case was not recorded)."""
    return [sum(seconds.get(case_key(c) or "", case_cost(c, table)) for c in p) for p in parts]


def spread(values: list[float]) -> str:
    top = max(values) or 1.0
    return ", ".join(f"{v:,.0f} s ({v / top:.0%})" for v in values) + f"; largest/smallest {top / max(min(values), 1e-9):.3f}"


def check_pairs(pairs: list[tuple[Path, Path]], count: int) -> None:
    """Each pair's warm costs predicted from its cold run by the other pairs' ratios, against the warm cases' line
    of the other pairs (what the table gives an unrecorded case): mean error per case, totals, and the pair's cases
    split `count` ways by the prediction, each part's measured warm cost."""
    corpus = {case_key(c): c for c in load_cases([str(ROOT / "cases")])}
    for i, (cold_dir, warm_dir) in enumerate(pairs):
        others = [p for j, p in enumerate(pairs) if j != i]
        predicted, _ = costs(*read_records(cold_dir)[:3], warm_ratios(others))
        measured, _ = costs(*read_records(warm_dir)[:3])
        points = [(case_macs(corpus[k]), v) for _, w in others for k, v in costs(*read_records(w)[:3])[0].items()
                  if k in corpus]
        fixed, per_mac = fit_line(points)
        keys = sorted(k for k in measured if k in predicted and k in corpus)
        err = sum(abs(predicted[k] - measured[k]) for k in keys) / len(keys)
        line = sum(abs(fixed + per_mac * case_macs(corpus[k]) - measured[k]) for k in keys) / len(keys)
        table = {"seconds": {k: predicted[k] for k in keys}}
        by_line = {"seconds": {}, "fixed_s": fixed, "per_mac_s": per_mac}
        print(f"{str(warm_dir)[-30:]}: {len(keys)} cases; mean error per case {err:.2f} s by the ratios, {line:.2f} s by "
              f"the line; total {sum(predicted[k] for k in keys):,.0f} s predicted, {sum(measured[k] for k in keys):,.0f} "
              "s measured")
        for name, t in (("the ratios", table), ("the line", by_line)):
            parts = [shard([corpus[k] for k in keys], s, count, table=t) for s in range(1, count + 1)]
            print(f"  split {count} ways by {name}, measured: "
                  f"{spread([sum(measured[case_key(c) or ''] for c in p) for p in parts])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shards", nargs="*", type=Path, help="shards run with their compile cache kept")
    ap.add_argument("--cold", action="append", type=Path, default=[], help="a shard run from an empty cache")
    ap.add_argument("--pair", action="append", nargs=2, type=Path, default=[], metavar=("COLD_DIR", "WARM_DIR"),
                    help="one shard run from an empty cache and then with its cache kept (the warm/cold ratios)")
    ap.add_argument("--write", type=Path, help=f"write the cost table here (the committed one: {COSTS.relative_to(ROOT)})")
    ap.add_argument("--shards-count", type=int, default=4, dest="count")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--host", default="", help="the host, for the table's `measured` line")
    ap.add_argument("--check-pairs", action="store_true",
                    help="predict each pair's warm costs from its cold run by the others' ratios, and stop")
    args = ap.parse_args(argv)
    if args.check_pairs:
        if len(args.pair) < 2:
            ap.error("--check-pairs needs two --pair or more")
        check_pairs([(c, w) for c, w in args.pair], args.count)
        return 0
    if args.cold and not args.pair:
        ap.error("--cold needs at least one --pair to convert its costs to a warm night's")
    ratios = warm_ratios([(c, w) for c, w in args.pair]) if args.pair else None
    seconds: dict[str, float] = {}
    converted: dict[str, float] = {}
    targets: dict[str, float] = defaultdict(float)
    print(f"{'shard':<40}{'results':>9}{'worker s':>11}{'wall s':>9}")
    n_records = 0
    for folder, cold in [(f, False) for f in args.shards] + [(f, True) for f in args.cold]:
        records, builds, built, wall, n = read_records(folder)
        n_records += n
        per_case, per_target = costs(records, builds, built, ratios if cold else None)
        for k, v in per_case.items():
            into = converted if cold else seconds
            into[k] = into.get(k, 0.0) + v
        if not cold:
            for k, v in per_target.items():
                targets[k] += v
        label = f"{str(folder)[-30:]} (cold, as warm)" if cold else str(folder)[-40:]
        print(f"{label:<40}{n:>9}{sum(per_target.values()):>11,.0f}{wall if wall is not None else float('nan'):>9,.0f}")
    if ratios is not None:
        print(f"warm/cold ratio over the pairs: {ratios[2]:.3f}")
    n_converted = sum(1 for k in converted if k not in seconds)
    seconds = {**converted, **seconds}  # a case recorded warm keeps its recorded cost
    total = sum(targets.values())
    if total:
        print(f"\ncost per target, the shards run warm ({total:,.0f} worker-s in all; the {args.top} most costly):")
        for target, s in sorted(targets.items(), key=lambda kv: -kv[1])[: args.top]:
            print(f"  {target:<36}{s:>10,.0f} s {s / total:>6.1%}")
    cases = load_cases([str(ROOT / "cases")])
    seen = [c for c in cases if case_key(c) in seconds]
    scale = sum(seconds[case_key(c)] for c in seen) / max(sum(estimate(c) for c in seen), 1.0)  # type: ignore[index]
    fixed, per_mac = fit_line([(case_macs(c), seconds[case_key(c)]) for c in seen])  # type: ignore[index]
    table = {"seconds": {k: round(v, 4) for k, v in sorted(seconds.items())}, "estimate_scale": scale,
             "fixed_s": round(fixed, 4), "per_mac_s": per_mac}
    print(f"\n{len(seen)} of the corpus' {len(cases)} cases recorded ({n_converted} of them from a cold run, as warm); "
          f"an unrecorded case costs {fixed:,.1f} s + {per_mac:.3e} s per multiply-add (the recorded cases' "
          "least-squares line)")
    by_estimate = [shard(cases, i, args.count, table={}) for i in range(1, args.count + 1)]
    by_table = [shard(cases, i, args.count, table=table) for i in range(1, args.count + 1)]
    print(f"{args.count} shards by the estimate alone: {spread(loads(by_estimate, seconds, table))}")
    print(f"{args.count} shards by the recorded costs:  {spread(loads(by_table, seconds, table))}")
    if args.write:
        how = f"{len(args.shards)} shard(s) run warm" + (f", {len(args.cold)} cold converted" if args.cold else "")
        table = {"about": "seconds of worker time per case (every target; forward, gradients, relations; batched builds "
                 "spread over their cases), for --shard (harness/model/shard.py); written by bench/shard_costs.py",
                 "measured": f"{date.today().isoformat()}, {args.host or os.uname().nodename}, {n_records} results of "
                 f"{how}", **table}
        args.write.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
