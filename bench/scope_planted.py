"""Does `convdiff scope` find the rule of a planted bug? Four plugin adapters (tests/planted_bugs.py), each
with a bug that shows exactly when a known rule holds: a conjunction on one axis, a relation between
channel counts, a threshold on K, an output-length condition.

For each: `convdiff scope --backends planted=tests.planted_bugs:<Class> --time T` writes scope.yaml; then
400 fresh random valid configurations (another seed) are judged twice: by the predicates (does the
inferred scope select the configuration exactly when the planted rule does: the agreement), and by a run
with the scope passed to --known-issues (no unexpected result, no known issue listed as now passing).
The planted adapters are torch's eager adapter, so they also give torch's own wrong results (e.g. a float16
transposed conv at its bound): an unexpected result on a case that plain `--backends torch` also fails on is
counted apart, as inherited from torch, not as the plant's.

    .venv/bin/python bench/scope_planted.py [--time 180] [--fresh 400] [--out reports/bench/scope-planted]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.commands.fuzz.gen import generate  # noqa: E402 - after the path: run as a script
from harness.judge.known_issues import load_known_issues  # noqa: E402
from harness.model.features import selector_names  # noqa: E402
from harness.model.predicate import compile_predicate, evaluate  # noqa: E402
from tests.planted_bugs import TRUTH  # noqa: E402

CONVDIFF = [sys.executable, "-m", "harness.commands.cli"]


def fresh_cases(path: Path, n: int, seed: int) -> list:
    """n random valid configurations of the fuzz generator (seed `seed`), written as a case file."""
    configs = []
    for cfg in generate(seed, invalid_rate=0.0):
        if cfg.case is not None:
            configs.append(cfg)
        if len(configs) >= n:
            break
    path.write_text("cases:\n" + "".join(f"  - {json.dumps(c.fields)}\n" for c in configs), encoding="utf-8")
    return [c.case for c in configs]


def torch_failures(fresh_file: Path, out: Path) -> set[str]:
    """Ids of the fresh cases on which plain torch does not pass (known issue or not)."""
    run = out / "torch-run"
    subprocess.run([*CONVDIFF, "run", str(fresh_file), "--backends", "torch", "--out", str(run)], cwd=ROOT,
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {r["case_id"] for r in map(json.loads, (run / "results.jsonl").read_text(encoding="utf-8").splitlines())
            if r["status"] not in ("pass", "unsupported", "skip")}


def measure(name: str, args: argparse.Namespace, fresh: list, fresh_file: Path, inherited: set[str]) -> dict:
    out = Path(args.out) / name
    spec = f"planted=tests.planted_bugs:{name}"
    t0 = time.monotonic()
    subprocess.run([*CONVDIFF, "scope", "--backends", spec, "--time", str(args.time), "--seed", str(args.seed),
                    "--out", str(out)], cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    scope_s = time.monotonic() - t0
    known = load_known_issues(out / "scope.yaml")
    truth = compile_predicate(TRUTH[name])
    agree = 0
    for case in fresh:
        want = evaluate(truth, selector_names(case.params()))
        got = any(e.matches(case, "planted", "cpu", None, "out") for e in known.entries)
        agree += want == got
    run = out / "fresh-run"
    subprocess.run([*CONVDIFF, "run", str(fresh_file), "--backends", spec, "--known-issues", str(out / "scope.yaml"),
                    "--out", str(run)], cwd=ROOT, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    unexpected = [r for r in summary["unexpected_results"] if r["case_id"] not in inherited]
    whens = [" / ".join(f"{k}: {v}" for k, v in e.cases.items()) for e in known.entries]
    return {"planted": name, "truth": TRUTH[name], "inferred": whens, "agreement": agree / len(fresh),
            "unexpected": len(unexpected),
            "inherited_from_torch": summary["unexpected"] - len(unexpected), "now_passing": len(summary["fixed_upstream"]),
            "scope_s": round(scope_s)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--time", type=float, default=180.0, help="seconds of `convdiff scope` per planted bug")
    p.add_argument("--fresh", type=int, default=400, help="fresh configurations to measure on")
    p.add_argument("--seed", type=int, default=1, help="scope's seed (the fresh ones use another)")
    p.add_argument("--out", default="reports/bench/scope-planted")
    p.add_argument("--only", help="one class of tests/planted_bugs.py")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    fresh_file = Path(args.out) / "fresh.yaml"
    fresh = fresh_cases(fresh_file, args.fresh, seed=args.seed + 1000)
    inherited = torch_failures(fresh_file, Path(args.out))
    rows = [measure(name, args, fresh, fresh_file, inherited) for name in TRUTH if not args.only or name == args.only]
    for r in rows:
        print(f"{r['planted']}: truth {r['truth']}")
        for w in r["inferred"]:
            print(f"    inferred {w}")
        print(f"    agreement on {len(fresh)} fresh configurations {r['agreement']:.1%}; with the scope as --known-issues: "
              f"{r['unexpected']} unexpected ({r['inherited_from_torch']} more that torch itself gives), {r['now_passing']} known issue(s) now passing; scope took {r['scope_s']} s")
    (Path(args.out) / "scope_planted.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["agreement"] >= 0.95 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
