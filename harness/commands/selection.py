"""Which cases and targets a command runs: the default corpus, the tier, gradients, the devices, the compiled
paths' sample, and the known issues that apply (with the entries that match nothing)."""

from __future__ import annotations

import dataclasses
import zlib
from pathlib import Path

from backends.registry import get_backend, real_backends
from harness.execution.runner import Select
from harness.judge.known_issues import KnownIssues, layered, project_known_issues
from harness.model.case import Case
from harness.model.loader import case_files
from harness.model.shard import case_macs

DEFAULT_CASES = "cases"


def default_cases() -> str:
    """The case files a command reads when none are named: ./cases, else convdiff's own corpus (a user's
    adapter project, outside convdiff's checkout, runs `convdiff selftest` or `repro` against it)."""
    if Path(DEFAULT_CASES).is_dir():
        return DEFAULT_CASES
    own = Path(__file__).resolve().parents[2] / DEFAULT_CASES
    return str(own) if own.is_dir() else DEFAULT_CASES
DEVICES = ("cpu", "cuda")


def select_tier(cases: list[Case], tier: str) -> list[Case]:
    """--tier smoke: smoke cases only; --tier full: all of them."""
    return [c for c in cases if tier == "full" or c.tier == "smoke"]


def with_gradients(cases: list[Case]) -> list[Case]:
    """--gradients: every case also runs its backward pass (as if it said `gradients: true`)."""
    return [dataclasses.replace(c, gradients=True) for c in cases]


def resolve_targets(backends: list[str], device: str) -> list[tuple[str, str]]:
    devices = DEVICES if device == "all" else (device,)
    return [(b, d) for b in backends for d in devices if d in get_backend(b).capabilities.devices]


# --compiled-sample draws only among the cases up to this many multiply-adds: the 11 convolutions of the
# model corpus above it (0.3-1.3 G) take seconds each on the compiled paths (deeplabv3's dilated 3x3 of
# 1.2 G: 17 s of wall on each of the six TVM paths' untuned llvm schedules, much of it waiting for a core;
# a warm `make run` 178 -> 174 s without it), so they run where every case does: SAMPLE=1, the nightly
SAMPLE_MAX_MACS = 300_000_000


def in_sample(case: Case, n: int) -> bool:
    """Whether a case is in the 1/n sample: a hash of its file name and id, so the sample spreads over
    every file, never changes when other cases are added, and is the same on every machine; among the
    cases of at most SAMPLE_MAX_MACS multiply-adds."""
    return case_macs(case) <= SAMPLE_MAX_MACS and zlib.crc32(f"{Path(case.file).name}::{case.id}".encode()) % n == 0


def compiled_sample(cases: list[Case], backends: list[str], n: int) -> tuple[Select | None, list[str]]:
    """--compiled-sample N: the backends that build a model per case (Backend.builds_per_case) run about
    1/N of the cases (in_sample); every other backend runs every case.
    (select, the sampled backends); (None, []) when N is 1 or no backend builds."""
    sampled = sorted({b for b in backends if get_backend(b).builds_per_case})
    if n <= 1 or not sampled:
        return None, []
    names = set(sampled)
    return (lambda backend, case: backend not in names or in_sample(case, n)), sampled


def known_issues_for(paths: list[str], user_files: list[str] | None = None,
                     backends: list[str] | None = None) -> KnownIssues:
    """The run's known issues (harness.judge.known_issues.layered): the user's --known-issues files, those the
    backends' adapters ship, the known_issues.yaml nearest above the case files, and convdiff's own, which
    applies wherever the cases are."""
    dirs = list(dict.fromkeys(f.parent for f in case_files(paths))) or [Path(default_cases())]
    return layered(user_files or [], dirs, [get_backend(b).known_issues_path() for b in backends or []])


def stale_entries(known: KnownIssues, paths: list[str], all_cases: list[Case]) -> list[str]:
    """Entries of each file that match no case, judged only against a whole case directory (never a hand-picked
    subset); convdiff's own entries only when the run covers its whole corpus."""
    if not all(Path(p).is_dir() for p in paths):
        return []
    project = project_known_issues()
    covered = {Path(p).resolve() for p in paths}
    out = []
    for source in known.sources:
        if project is not None and Path(source).resolve() == project.resolve() and project.parent not in covered:
            continue
        mine = KnownIssues([e for e in known.entries if e.source == source])
        out += [e.id for e in mine.stale(all_cases, real_backends())]
    return out
