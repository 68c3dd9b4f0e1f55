"""The share of the database's host-applicable known issues a fuzz rediscovers: a failing result each explains.

A known issue applies on this host when one of the fuzz's targets is a backend it names, on a device it names,
with host facts its `host:` accepts (the facts each target's worker reported, summary.json). It is
rediscovered when some result of the run has it as known issue with a failing status it lists. An entry that
selects corpus cases by their id or file (`case:`, `file:`) is out of any fuzz's reach: it stays in the
share's denominator, and is also listed apart (`unreachable`). The fuzz is
`convdiff fuzz --time 600 --seed 1` on every installed backend, generation only (`--minimize-budget 0`: the
share is about finding, not shrinking); `--from DIR` measures an earlier fuzz's output instead.

    .venv/bin/python bench/fuzz_share.py [--time 600] [--seed 1] [--out reports/bench/fuzz-share] [--from DIR]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.execution.records import FAILING, read_records  # noqa: E402 - after the path: run as a script
from harness.judge.known_issues import KnownIssue, load_known_issues, project_known_issues  # noqa: E402


def applies(entry: KnownIssue, targets: dict[str, dict]) -> bool:
    """Whether an entry names one of the run's targets (backend-device) and accepts its host facts."""
    for target, facts in targets.items():
        backend, _, device = target.rpartition("-")
        if (any(fnmatch.fnmatchcase(backend, b) for b in entry.backend) and (not entry.device or device in entry.device)
                and entry.host_matches(facts)):
            return True
    return False


def share(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    fp = summary.get("fingerprint", {})
    cpu = fp.get("host", {}) if isinstance(fp.get("host"), dict) else {}
    targets = {t: {**cpu, **(fp.get("host_facts", {}).get(t) or {})} for t in fp.get("targets", [])}
    entries = load_known_issues(project_known_issues()).entries
    applicable = [e for e in entries if applies(e, targets)]
    records = read_records([out / "results.jsonl"])
    found = {r.known_issue for r in records if r.known_issue and r.status in FAILING and r.status in r.known_status}
    hit = [e.id for e in applicable if e.id in found]
    fuzz = summary.get("fuzz", {})
    return {"applicable": len(applicable), "rediscovered": len(hit), "share": round(len(hit) / max(len(applicable), 1), 3),
            "entries": len(entries), "cases_run": fuzz.get("cases_run"), "run_s": fuzz.get("run_s"),
            "results": len(records),
            "missed": sorted(e.id for e in applicable if e.id not in found),
            "unreachable": sorted(e.id for e in applicable if "case" in e.cases or "file" in e.cases)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--time", type=float, default=600.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="reports/bench/fuzz-share")
    p.add_argument("--from", dest="source", help="measure this earlier fuzz output directory instead of fuzzing")
    args = p.parse_args()
    out = Path(args.source or args.out)
    if not args.source:
        subprocess.run([sys.executable, "-m", "harness.commands.cli", "fuzz", "--time", str(args.time), "--seed",
                        str(args.seed), "--minimize-budget", "0", "--out", str(out)], cwd=ROOT, check=False,
                       stdout=subprocess.DEVNULL)
    s = share(out)
    print(f"fuzz share: {s['rediscovered']} of the {s['applicable']} known issues that apply on this host "
          f"({s['share']:.0%}; {s['entries']} in the database; {len(s['unreachable'])} select corpus cases by id or "
          f"file) have a failing result they explain; {s['cases_run']} cases, {s['results']} results in {s['run_s']} s")
    (out / "fuzz_share.json").write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
