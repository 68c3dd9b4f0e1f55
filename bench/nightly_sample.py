"""The nightly's work on a fixed sample of the corpus: what a night costs per target and per case, where a whole
night does not fit the machine (a 2-core host runs it for hours).

    python bench/nightly_sample.py --sample 16 [--part 0] [--backends LIST] --out DIR

Runs what a nightly shard runs (`convdiff run --tier full --gradients --relations all`, every installed target,
no compiled sample) on the cases whose hash puts them in part PART of SAMPLE (the hash of `--compiled-sample`:
file name and id, spread over every file; PART 0 is that sample), through the same runner, known issues and
judge as `convdiff run`, and writes DIR/results.jsonl and DIR/summary.json (with `builds`, the batched builds'
seconds) and DIR/wall_s: what bench/shard_costs.py reads. SAMPLE parts together are the corpus: run them all
(on several machines, or nights) for a complete cost table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backends.registry import installed_backends, parse_backends  # noqa: E402
from harness.commands.cli import known_issues_for, resolve_targets, with_gradients  # noqa: E402
from harness.execution.preloads import prestart  # noqa: E402
from harness.execution.progress import Progress  # noqa: E402
from harness.execution.records import JsonlSink, Record  # noqa: E402
from harness.execution.relation_exec import RelationPlan  # noqa: E402
from harness.execution.runner import run_cases  # noqa: E402
from harness.judge.verdict import Verdicts  # noqa: E402
from harness.model.loader import load_cases  # noqa: E402
from harness.numerics.relations import parse_relations  # noqa: E402


def in_part(file: str, case_id: str, sample: int, part: int) -> bool:
    return zlib.crc32(f"{Path(file).name}::{case_id}".encode()) % sample == part


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=16)
    ap.add_argument("--part", type=int, default=0)
    ap.add_argument("--backends", help="default: every installed backend")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    cases = [c for c in load_cases([str(ROOT / "cases")]) if in_part(c.file, c.id, args.sample, args.part)]
    cases = with_gradients(cases)
    backends = parse_backends(args.backends) if args.backends else installed_backends()
    targets = resolve_targets(backends, "cpu")
    prestart([b for b, _ in targets])
    known = known_issues_for([str(ROOT / "cases")], [], backends)
    plan = RelationPlan(tuple(parse_relations("all")), None)
    args.out.mkdir(parents=True, exist_ok=True)
    sink = JsonlSink(args.out / "results.jsonl")
    progress = Progress(len(cases) * len(targets))
    print(f"nightly sample: part {args.part} of {args.sample}: {len(cases)} cases x {len(targets)} targets", file=sys.stderr)

    def collect(rec: Record) -> None:
        sink(rec)
        progress.update(rec.status)

    try:
        info = run_cases(cases, targets, collect, Verdicts(known), timeout=args.timeout, relations=plan)
    finally:
        sink.close()
        progress.close()
    wall = time.perf_counter() - start
    (args.out / "summary.json").write_text(json.dumps({"builds": info.builds, "skipped": info.skipped,
                                                       "broken": info.broken, "cases": len(cases)}, indent=1))
    (args.out / "wall_s").write_text(f"{wall:.1f}\n")
    print(f"{len(cases)} cases in {wall:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
