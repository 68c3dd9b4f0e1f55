"""The share of the database's host-applicable known issues a fuzz rediscovers: a failing result each explains.

A known issue applies on this host when one of the fuzz's targets is a backend it names, on a device it names,
with host facts its `host:` accepts (the facts each target's worker reported, summary.json). It is
rediscovered when some result of the run has it as known issue with a failing status it lists. An entry that
selects corpus cases by their id or file (`case:`, `file:`) is out of any fuzz's reach: it stays in the
share's denominator, and is also listed apart (`unreachable`). The fuzz is
`convdiff fuzz --time 600 --seed 1` on every installed backend, generation only (`--minimize-budget 0`: the
share is about finding, not shrinking); `--from DIR` measures an earlier fuzz's output instead.

Each missed entry gets the reason it was missed (`why_missed`, the run's own cases and results), the first that
holds of:
- `not drawn`: no generated case lies inside its selector on a target it names (a conjunction the generator
  did not draw in the time);
- `not run`: some do, but none of its targets ran one (a paced target's share, harness/commands/fuzz/pace.py);
- `unsupported`: its targets gave back `unsupported` for every such case;
- `explained by another entry`: a failing result inside it is listed by an entry that comes first in the
  database (the first that matches explains a result; `shadowed_by` names it);
- `passed`: every result inside it passed (a data- or host-dependent entry that lists `pass`);
- `other status`: the results inside it failed with a status it does not list.
The counts per reason (`why`) say where the rest of the share is: in the generator, in the slow targets' share
of the cases, or in entries whose failure this host or this data does not show.

    .venv/bin/python bench/fuzz_share.py [--time 600] [--seed 1] [--out reports/bench/fuzz-share] [--from DIR]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.execution.records import FAILING, Record, read_records  # noqa: E402 - after the path: run as a script
from harness.judge.known_issues import KnownIssue, load_known_issues, project_known_issues  # noqa: E402
from harness.model.case import Case  # noqa: E402
from harness.model.loader import load_file  # noqa: E402


def applies(entry: KnownIssue, targets: dict[str, dict]) -> bool:
    """Whether an entry names one of the run's targets (backend-device) and accepts its host facts."""
    return any(names_target(entry, target) and entry.host_matches(facts) for target, facts in targets.items())


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
    missed = [e for e in applicable if e.id not in found]
    cases_file = out / "fuzz-cases.yaml"
    why = why_missed(missed, targets, load_file(cases_file) if cases_file.exists() else [], records)
    return {"applicable": len(applicable), "rediscovered": len(hit), "share": round(len(hit) / max(len(applicable), 1), 3),
            "entries": len(entries), "cases_run": fuzz.get("cases_run"), "run_s": fuzz.get("run_s"),
            "results": len(records),
            "missed": sorted(e.id for e in missed),
            "why": dict(Counter(w["reason"] for w in why.values()).most_common()),
            "why_missed": why,
            "unreachable": sorted(e.id for e in applicable if "case" in e.cases or "file" in e.cases)}


def why_missed(missed: list[KnownIssue], targets: dict[str, dict], cases: list[Case],
               records: list[Record]) -> dict[str, dict]:
    """Per missed entry: the reason (the module doc), the cases drawn inside it, its results inside it by status,
    and the entries that explained its failing ones."""
    by_case: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_case[r.case_id].append(r)
    out: dict[str, dict] = {}
    for e in missed:
        mine = {t: f for t, f in targets.items() if names_target(e, t) and e.host_matches(f)}
        drawn, statuses, shadowed_by = 0, Counter[str](), Counter[str]()
        for case in cases:
            params = case.params()
            inside = False
            for t, facts in mine.items():
                backend, _, device = t.rpartition("-")
                if not inside and e.matches(case, backend, device, facts, None, params):
                    inside = True
                for r in by_case.get(case.id, ()):
                    if (r.backend, r.device) == (backend, device) and e.matches(
                            case, backend, device, facts, r.output, params, r.path or ""):
                        statuses[r.status] += 1
                        if r.status in FAILING and r.known_issue and r.known_issue != e.id and r.status in e.status:
                            shadowed_by[r.known_issue] += 1
            drawn += inside
        failing = [s for s in statuses if s in FAILING]
        reason = ("not drawn" if not drawn else "not run" if not statuses else
                  "unsupported" if set(statuses) == {"unsupported"} else
                  "explained by another entry" if shadowed_by else
                  "passed" if not failing else "other status")
        out[e.id] = {"reason": reason, "drawn_inside": drawn, "results_inside": dict(statuses),
                     "shadowed_by": dict(shadowed_by)}
    return out


def names_target(entry: KnownIssue, target: str) -> bool:
    """Whether the entry names this target ("backend-device") among its backends and devices."""
    backend, _, device = target.rpartition("-")
    return any(fnmatch.fnmatchcase(backend, b) for b in entry.backend) and (not entry.device or device in entry.device)


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
    print("missed, by reason: " + ", ".join(f"{k} {v}" for k, v in s["why"].items()))
    (out / "fuzz_share.json").write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
