"""The nightly workflow's jobs, run here as written (tests/gha.py): the nearest thing to a real runner.

    .venv/bin/python bench/workflow_jobs.py [--shard N] [--tier smoke|full] [--keep DIR]
    .venv/bin/python bench/workflow_jobs.py --check probe|repro|upstream|reports [--keep DIR]

Runs nightly.yml's `shard` job for one shard (matrix: cpu, pinned; the workflow_dispatch input `tier`,
smoke by default here) from a copy of the working tree: its install step (`pip install -c constraints.txt
... -e '.[all,dev]'` into a fresh .venv), the compile-cache key, `convdiff run --shard N/4 --gradients`
and the fuzz step (600 s; `BENCH_FAST=1` stops before it); then the `report` job on that shard's artefacts,
twice (the second night diffs against the first night's summary). With --check, one `checks` job instead
(pinned): its install and the check's steps. Prints each step's wall time and exit status. Every `uses:` is done by a local equivalent (tests/gha.py).
tests/test_install_matrix.py runs the report job in make test; this runs the rest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.gha import Job, path_env  # noqa: E402 - after the path: bench/ is not a package
from tests.venvs import copy_tree  # noqa: E402

WORKFLOW = ROOT / ".github" / "workflows" / "nightly.yml"


def actions(store: Path) -> dict:
    """Local equivalents of the hosted actions: artefacts and caches are directories under `store`."""

    def setup_python(job: Job, params: dict) -> None:
        """A Python of its own for the job, first on PATH, as the hosted action gives (a fresh virtualenv)."""
        py = job.workdir.parent / f"python-{job.job_id}-{job.run_id}"
        subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", str(py)], check=True)
        job.env.update(path_env(py))

    def upload(job: Job, params: dict) -> None:
        dest = store / "artifacts" / params["name"]
        for line in params["path"].split():
            src = job.workdir / line
            if src.exists():
                (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / src.name if src.is_file() else dest,
                                                                   **({"dirs_exist_ok": True} if src.is_dir() else {}))

    def download(job: Job, params: dict) -> None:
        for d in sorted((store / "artifacts").glob(params.get("pattern", "*"))):
            shutil.copytree(d, job.workdir / params["path"] / d.name, dirs_exist_ok=True)

    def restore(job: Job, params: dict) -> None:
        prefix = params.get("restore-keys", params["key"]).strip()
        kept = sorted((store / "cache").glob(prefix + "*"))
        if kept:
            shutil.copytree(kept[-1], job.workdir / params["path"], dirs_exist_ok=True)

    def save(job: Job, params: dict) -> None:
        src = job.workdir / params["path"]
        if src.exists():
            shutil.copytree(src, store / "cache" / params["key"], dirs_exist_ok=True)

    if (store / "artifacts").exists() is False:
        (store / "artifacts").mkdir(parents=True)
    return {"actions/checkout": lambda job, p: None, "actions/setup-python": setup_python,
            "actions/upload-artifact": upload, "actions/download-artifact": download,
            "actions/cache/restore": restore, "actions/cache/save": save}


def show(job: Job, seconds: float) -> int:
    print(f"\n{job.job_id} ({seconds:.0f} s):")
    for r in job.results:
        print(f"  exit {r.returncode:>3}  {r.name}")
    bad = [r for r in job.results if r.returncode]
    for r in bad:
        print(f"--- {r.name} ---\n{r.output[-2000:]}")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shard", type=int, default=4)
    ap.add_argument("--tier", default="smoke")
    ap.add_argument("--keep", help="work here and keep it (default: a temporary directory)")
    ap.add_argument("--check", choices=("probe", "repro", "upstream", "reports"), help="run this `checks` job instead")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="workflow-jobs-"))
    store = base / "store"
    local = actions(store)
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR", "PIP_CACHE_DIR")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    stop = "convdiff fuzz (fixed time; seed = date + shard)" if os.environ.get("BENCH_FAST") else None
    status = 0
    start = time.monotonic()
    if args.check:
        check = Job(WORKFLOW, "checks", copy_tree(base / "checks"), matrix={"check": args.check, "versions": "pinned"})
        check.run(local, env)
        status = show(check, time.monotonic() - start)
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        return status
    shard = Job(WORKFLOW, "shard", copy_tree(base / "shard"), matrix={"shard": args.shard, "device": "cpu",
                "versions": "pinned"}, inputs={"tier": args.tier})
    shard.run(local, env, stop=stop)
    status |= show(shard, time.monotonic() - start)
    for night in (1, 2):
        start = time.monotonic()
        report = Job(WORKFLOW, "report", copy_tree(base / f"report{night}"), run_id=str(night))
        report.run(local, env)
        status |= show(report, time.monotonic() - start)
        print(f"  status={report.env.get('status')} fuzz_status={report.env.get('fuzz_status')}")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
