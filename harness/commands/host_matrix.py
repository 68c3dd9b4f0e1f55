"""Run the corpus once per emulated host and print the verdicts side by side (`make host-matrix`).

Each setting is a set of environment variables that makes this machine's frameworks
pick the kernels another machine would: TensorFlow with oneDNN off (an AVX2-only CPU)
or forced on, oneDNN capped at AVX2, ATen at its portable kernels. Verdicts that change
between rows belong in known_issues.yaml under a `host:` selector; a row with anything
unexpected fails the target.

    python -m harness.host_matrix [--tier smoke|full] [--backends LIST] [--out DIR] [--only NAME,...]
    env $(python -m harness.host_matrix --env avx2-host) make test   # the whole suite as on an AVX2 machine
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

# name -> environment; "avx2-host" combines what an AVX2-only machine does by itself.
SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "tf-onednn-off": {"TF_ENABLE_ONEDNN_OPTS": "0"},
    "tf-onednn-on": {"TF_ENABLE_ONEDNN_OPTS": "1"},
    "onednn-avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "avx2-host": {"TF_ENABLE_ONEDNN_OPTS": "0", "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
}


def run_setting(name: str, env: dict[str, str], args: argparse.Namespace) -> dict:
    out = Path(args.out) / name
    cmd = [sys.executable, "-m", "harness.commands.cli", "run", *args.cases, "--tier", args.tier, "--out", str(out)]
    if args.backends:
        cmd += ["--backends", args.backends]
    start = time.monotonic()
    proc = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=False)
    summary_path = out / "summary.json"
    if not summary_path.exists():
        return {"name": name, "rc": proc.returncode, "error": (proc.stderr or proc.stdout).strip()[-300:]}
    s = json.loads(summary_path.read_text(encoding="utf-8"))
    facts = s.get("fingerprint", {}).get("host_facts", {})
    # a backend whose worker fails to start under this setting ran nothing: say so, never a silent gap
    broken = [ln.split()[1].rstrip(":") for ln in proc.stderr.splitlines()
              if ln.startswith("skipped ") and ": setup failed" in ln]
    return {"name": name, "rc": proc.returncode, "seconds": round(time.monotonic() - start, 1), "setup_failed": broken,
            "results": s.get("total", 0), "unexpected": s.get("unexpected", 0),
            "known": sum(1 for r in _records(out) if r.get("known_issue") and r["status"] in r.get("known_status", [])),
            "fixed": len(s.get("fixed_upstream", [])),
            "key": s.get("fingerprint", {}).get("host_key", "?"),
            "facts": {k: v for t in facts.values() for k, v in t.items()
                      if k in ("tf_onednn", "torch_cpu_capability", "torch_mkldnn_bf16", "inductor_vec_isa",
                               "openvino_int8_pair_sums", "openvino_int8_grouped_conv3d_kernel",
                               "torch_int8_pair_sums", "ort_int8_pair_sums")}}


def _records(out: Path) -> list[dict]:
    path = out / "results.jsonl"
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.host_matrix", description=__doc__.split("\n\n")[0])
    p.add_argument("cases", nargs="*", help="case files or directories (default: cases/)")
    p.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    p.add_argument("--backends", default=None)
    p.add_argument("--out", default="reports/host-matrix")
    p.add_argument("--only", default=None, help=f"comma-separated settings (default: all of {', '.join(SETTINGS)})")
    p.add_argument("--env", default=None, metavar="NAME", help="print one setting's variables as K=V words (for `env`) and exit")
    args = p.parse_args(argv)
    if args.env is not None:
        if args.env not in SETTINGS:
            print(f"host_matrix: unknown setting '{args.env}' (known: {', '.join(SETTINGS)})", file=sys.stderr)
            return 2
        print(" ".join(f"{k}={v}" for k, v in SETTINGS[args.env].items()))
        return 0
    names = args.only.split(",") if args.only else list(SETTINGS)
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        print(f"host_matrix: unknown setting(s) {', '.join(unknown)} (known: {', '.join(SETTINGS)})", file=sys.stderr)
        return 2
    rows = []
    for name in names:
        row = run_setting(name, SETTINGS[name], args)
        rows.append(row)
        if "error" in row:
            print(f"{name:<14} failed to run (exit {row['rc']}): {row['error']}")
        else:
            print(f"{name:<14} {row['results']:>6} results {row['unexpected']:>4} unexpected {row['known']:>5} known "
                  f"{row['fixed']:>3} fixed? {row['seconds']:>7.1f} s  key {row['key']}  {json.dumps(row['facts'])}"
                  + (f"  setup failed: {', '.join(row['setup_failed'])}" if row["setup_failed"] else ""), flush=True)
    return 0 if all(r.get("unexpected") == 0 and not r.get("setup_failed") and "error" not in r for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
