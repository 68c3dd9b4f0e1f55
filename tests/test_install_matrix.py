"""Every install the README offers, made fresh and used: `pip install -e .` and each extra alone.

Each install is a new virtualenv from the package index with constraints.txt (tests/venvs.py), in which
`convdiff --help`, `convdiff backends`, a smoke run of the family the extra installs (0 unexpected, no
`error`) and `convdiff report` merging shards must work. The base install (what the nightly's report job
installs: "no frameworks needed to report") must need no framework at all; in it the nightly's report job
runs as written (tests/gha.py), merging shards and diffing against a cached baseline.

Nightly only (`@pytest.mark.nightly`, CONVDIFF_FULL_TESTS=1), all of it. Measured on a 2-core AMD EPYC Zen 4,
2026-11-29, pip's cache warm, an empty convdiff cache: the base install and its checks 28.9 CPU-s (51 s of
wall, much of it pip and the index), the report job in it 20.1 CPU-s (29 s): 49 of the 974 CPU-s of a cold
make test, for a packaging check make test keeps in cheaper forms (tests/test_dependencies.py: every import
declared, frameworks only in their extras; tests/test_report_merge.py: shards merged by `convdiff report`).
Every extra alone installs hundreds of MB to GBs of frameworks (the closing figures are in docs/guide/ci.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gha import Job
from tests.venvs import FAMILIES, ROOT, Install, fresh_install

pytestmark = [pytest.mark.xdist_group("install-matrix"),  # one process builds the base install once
              pytest.mark.nightly("a fresh virtualenv from the package index per install: see the module docstring")]


def sharded_results(dest: Path, backends: str, python: str = sys.executable, shards: int = 2) -> list[Path]:
    """Shards of one smoke run (the nightly's `--shard i/n` artefacts), each in a folder of its own."""
    out = []
    for i in range(1, shards + 1):
        d = dest / f"results-cpu-pinned-{i}"
        proc = subprocess.run([python, "-m", "harness.commands.cli", "run", "cases/conv1d.yaml", "cases/conv2d.yaml",
                               "--tier", "smoke", "--backends", backends, "--shard", f"{i}/{shards}", "--out", str(d)],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        out.append(d / "results.jsonl")
    return out


def summary_of(d: Path) -> dict:
    return json.loads((d / "summary.json").read_text())


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Install:
    return fresh_install(tmp_path_factory.mktemp("base"), "")


def check_install(inst: Install, extra: str, tmp: Path) -> dict:
    """The README's promise for one install; returns what it measured (for bench and the docs)."""
    helped = inst.convdiff("--help")
    assert helped.returncode == 0 and "usage: convdiff" in helped.stdout, helped.stderr
    listed = inst.convdiff("backends")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    family = FAMILIES[extra]
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:] if line.strip()}
    for name in family:
        assert "unavailable" not in rows.get(name, "unavailable"), f"[{extra}] {name}: {rows.get(name)}"
    measured: dict = {"extra": extra or "(base)", "install_s": round(inst.seconds, 1), "size_mb": round(inst.size_mb())}
    if not family:  # the report-only install: no framework at all, and a run says how to get one
        frameworks = ("torch", "tensorflow", "paddle", "tvm", "jax", "onnxruntime", "openvino")
        probe = subprocess.run([str(inst.bin / "python"), "-c", "import importlib.util, sys; "
                                f"sys.exit(any(importlib.util.find_spec(m) for m in {frameworks!r}))"], env=inst.env())
        assert probe.returncode == 0, "the base install pulled in a framework"
        run = inst.convdiff("run", "cases/conv1d.yaml", "--backends", "torch", "--out", str(tmp / "norun"))
        assert "pip install 'convdiff[torch]'" in run.stdout + run.stderr
        shards = sharded_results(tmp / "shards", "torch")  # made by the full install: the artefacts of the nightly
    else:
        out = tmp / "smoke"
        run = inst.convdiff("run", "cases", "--tier", "smoke", "--backends", ",".join(family), "--out", str(out))
        summary = summary_of(out)
        errors = sum(c.get("error", 0) for c in summary["counts"].values())
        measured["smoke"] = {t: c for t, c in summary["counts"].items()}
        assert summary["unexpected"] == 0 and errors == 0 and run.returncode == 0, run.stdout[-3000:]
        shards = sharded_results(tmp / "shards", ",".join(family), python=str(inst.bin / "python"))
    merged = inst.convdiff("report", *map(str, shards), "--out", str(tmp / "merged"))
    assert merged.returncode in (0, 1), merged.stdout + merged.stderr
    together = sum(len(p.read_text().splitlines()) for p in shards)
    assert summary_of(tmp / "merged")["total"] == together > 0
    return measured


def test_base_install_reports_without_a_framework(base: Install, tmp_path: Path) -> None:
    check_install(base, "", tmp_path)


def test_nightly_report_job_as_written(base: Install, tmp_path: Path) -> None:
    """The report job of nightly.yml, step by step, in the base install: shards merged, the host key read,
    tonight's summary kept as tomorrow's baseline; the second night, with that baseline, exits 0 (nothing
    new), and a shard with a planted new unexpected result exits 1 through the same steps."""
    artefacts = tmp_path / "artefacts"
    sharded_results(artefacts, "torch")
    cache = tmp_path / "cache"

    def night(n: int, extra_shard: Path | None = None) -> Job:
        work = tmp_path / f"night{n}"
        shutil.copytree(base.src, work)
        job = Job(ROOT / ".github" / "workflows" / "nightly.yml", "report", work, run_id=str(n))
        job.run(local_actions(artefacts, cache, base, extra_shard), base.env())
        return job

    first = night(1)
    assert first.step("merge shards and compare with the baseline").returncode == 0
    assert first.env.get("status") == "0", first.step("merge shards and compare with the baseline").output
    assert (cache / "nightly-summary").exists(), "tonight's summary was not kept"
    second = night(2)
    assert second.env.get("status") == "0", second.step("merge shards and compare with the baseline").output
    assert second.step("fail only on new unexpected findings or new fuzz signatures").returncode == 0
    planted = tmp_path / "planted"
    shutil.copytree(artefacts / "results-cpu-pinned-1", planted)
    lines = (planted / "results.jsonl").read_text().splitlines()
    rec = json.loads(lines[0]) | {"status": "mismatch", "case_id": "planted_new_finding", "known_issue": None}
    (planted / "results.jsonl").write_text("\n".join([*lines, json.dumps(rec)]) + "\n")
    third = night(3, planted)
    assert third.env.get("status") == "1"
    assert third.step("fail only on new unexpected findings or new fuzz signatures").returncode != 0


def local_actions(artefacts: Path, cache: Path, base: Install, extra_shard: Path | None) -> dict:
    """The hosted actions of the report job, done locally (tests/gha.py's module doc)."""

    def download(job: Job, params: dict) -> None:
        dest = job.workdir / params["path"]
        for d in sorted(artefacts.iterdir()):
            shutil.copytree(d, dest / d.name)
        if extra_shard is not None:
            shutil.copytree(extra_shard, dest / "results-planted")

    def restore(job: Job, params: dict) -> None:
        kept = cache / "nightly-summary"
        if kept.exists():
            shutil.copytree(kept, job.workdir / params["path"])

    def save(job: Job, params: dict) -> None:
        if params["key"].startswith("nightly-summary-"):
            shutil.rmtree(cache / "nightly-summary", ignore_errors=True)
            shutil.copytree(job.workdir / params["path"], cache / "nightly-summary")

    def upload(job: Job, params: dict) -> None:
        for line in params["path"].split():
            assert (job.workdir / line).exists(), f"upload-artifact: {line} missing"

    return {"actions/checkout": lambda job, p: None,  # the job's directory is already a copy of the tree
            "actions/setup-python": lambda job, p: None,  # the base install's venv is first on PATH
            "actions/download-artifact": download, "actions/cache/restore": restore,
            "actions/cache/save": save, "actions/upload-artifact": upload}


@pytest.mark.parametrize("extra", [e for e in FAMILIES if e])
def test_each_extra_alone(extra: str, tmp_path: Path) -> None:
    inst = fresh_install(tmp_path / "install", extra)
    try:
        measured = check_install(inst, extra, tmp_path)
        print(json.dumps(measured))
    finally:
        shutil.rmtree(inst.venv, ignore_errors=True)
