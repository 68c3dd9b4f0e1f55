"""How many of the database's entries a fuzz of a given length can reach, estimated without running a framework.

An entry is *reached* when the fuzz draws a case inside its selector and one of the targets it names runs that
case. That bounds the fuzz share from above (bench/fuzz_share.py): a reached entry is found only if its
failure shows on this host, with this data, and no entry listed before it takes the result. The estimate
replays what a fuzz decides without its results: the seed's configurations in order (gen.generate; the
steered neighbours of failures, a third of a real run's cases, are left out) through the pace
(harness/commands/fuzz/pace.py) with the costs per case an earlier fuzz measured (`--from DIR`, its
summary.json), and scales the length by the base configurations that run drew. The host facts are that
run's too.

    .venv/bin/python bench/fuzz_reach.py --from reports/bench/fuzz-share [--seeds 7,11,13] [--minutes 10,30,60]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fuzz_share import names_target  # noqa: E402 - after the path: run as a script

from harness.commands.fuzz.campaign import GRADIENT_SHARE, INVALID_RATE  # noqa: E402
from harness.commands.fuzz.gen import generate  # noqa: E402
from harness.commands.fuzz.pace import Pace  # noqa: E402
from harness.judge.known_issues import KnownIssue, load_known_issues, project_known_issues  # noqa: E402
from harness.model.case import Case  # noqa: E402


def ran_cases(seed: int, configs: int, costs: dict[str, float], slow: set[str]) -> dict[str, list[Case]]:
    """Per backend, the cases the pace gives it among the seed's first `configs` configurations."""
    pace = Pace(sorted(costs), slow=slow)
    ran: dict[str, list[Case]] = {b: [] for b in costs}
    for index, cfg in enumerate(generate(seed, INVALID_RATE, GRADIENT_SHARE)):
        if index >= configs:
            break
        if cfg.case is None:
            continue
        for backend, cost in costs.items():
            if pace.select(backend, cfg.case):
                ran[backend].append(cfg.case)
                pace.record(SimpleNamespace(backend=backend, output="out", status="pass", duration_s=cost))  # type: ignore[arg-type]
    return ran


def reached(entries: list[KnownIssue], targets: dict[str, dict], ran: dict[str, list[Case]]) -> set[str]:
    out = set()
    for e in entries:
        for target, facts in targets.items():
            backend, _, device = target.rpartition("-")
            if names_target(e, target) and e.host_matches(facts) and any(
                    e.matches(c, backend, device, facts, None) for c in ran.get(backend, ())):
                out.add(e.id)
                break
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from", dest="source", required=True, help="a fuzz output directory (its summary.json)")
    p.add_argument("--seeds", default="7,11,13")
    p.add_argument("--minutes", default="10,20,30,60")
    args = p.parse_args()
    summary = json.loads((Path(args.source) / "summary.json").read_text(encoding="utf-8"))
    fp, fuzz = summary["fingerprint"], summary["fuzz"]
    targets = {t: {**fp.get("host", {}), **(fp.get("host_facts", {}).get(t) or {})} for t in fp["targets"]}
    costs = {b: v["s_per_case"] for b, v in fuzz["targets"].items()}
    slow = {b for b, c in costs.items() if c > 1.0}
    base = sum(n for kind, n in fuzz["configs"].items() if not kind.endswith(":near"))
    minutes_run = fuzz["run_s"] / 60
    entries = load_known_issues(project_known_issues()).entries
    applicable = [e for e in entries if any(names_target(e, t) and e.host_matches(f) for t, f in targets.items())]
    print(f"{len(applicable)} entries apply; the run drew {base} base configurations in {minutes_run:.1f} min")
    for minutes in (float(m) for m in args.minutes.split(",")):
        configs = round(base * minutes / minutes_run)
        counts = [len(reached(applicable, targets, ran_cases(int(s), configs, costs, slow)))
                  for s in args.seeds.split(",")]
        print(f"{minutes:g} min ({configs} configurations): reached " + ", ".join(
            f"{n} ({n / len(applicable):.0%})" for n in counts) + f" for seeds {args.seeds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
