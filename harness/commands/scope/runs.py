"""Running fresh cases for `convdiff scope`: warm workers kept across rounds, every case and result kept.

The cases go to DIR/scope-cases.yaml as they are run (so `convdiff repro` finds them, as after a fuzz)
and the results to DIR/results.jsonl; at the end the usual summary.json, report.html and junit.xml.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.commands.fuzz.gen import Config
from harness.commands.run_outputs import write_run_outputs
from harness.execution.records import JsonlSink, Record
from harness.execution.runner import Lane, RunInfo
from harness.judge.known_issues import KnownIssues
from harness.judge.verdict import Verdicts
from harness.model.case import Case


class ScopeUsage(ValueError):
    """Bad arguments; the CLI turns it into a usage error."""


def key(case: Case) -> str:
    """A case as results name it: `<file name>::<id>` (Record.file and Record.case_id)."""
    return f"{Path(case.file).name}::{case.id}"


class Runs:
    """Warm workers for the targets; `run` judges cases with the known issues and returns their records."""

    def __init__(self, targets: Sequence[tuple[str, str]], known: KnownIssues, out: Path, timeout: float) -> None:
        self.known, self.out, self.timeout = known, out, timeout
        out.mkdir(parents=True, exist_ok=True)
        self.info = RunInfo()
        self.lane = Lane(targets)
        self.lane.start(self.info)
        self.records: list[Record] = []
        self.sink = JsonlSink(out / "results.jsonl")
        self.cases_file = out / "scope-cases.yaml"
        self.cases_file.write_text("# convdiff scope: every generated case that ran\ncases:\n", encoding="utf-8")
        self.cases: dict[str, Case] = {}  # by key(): ids repeat across case files

    @property
    def ready(self) -> list[str]:
        """The targets whose workers started."""
        return [w.target for w in self.lane.workers]

    def run(self, configs: Sequence[Config | Case], select: Callable[[str, Case], bool] | None = None) -> list[Record]:
        """Run the configurations (generated ones are written to scope-cases.yaml first) or cases."""
        cases: list[Case] = []
        with open(self.cases_file, "a", encoding="utf-8") as fh:
            for c in configs:
                case = c.case if isinstance(c, Config) else c
                if case is None or key(case) in self.cases:
                    continue
                if isinstance(c, Config):
                    fh.write(f"  - {json.dumps(c.fields)}\n")
                self.cases[key(case)] = case
                cases.append(case)
        got: list[Record] = []

        def keep(rec: Record) -> None:
            self.sink(rec)
            got.append(rec)

        if cases:
            self.lane.run(cases, self.timeout, Verdicts(self.known), keep, select=select, plan=cases)
        self.records += got
        return got

    def stop(self) -> None:
        """Stop the workers and close results.jsonl (once)."""
        self.lane.stop()
        self.sink.close()

    def write_outputs(self, argv: list[str]) -> dict:
        """The run's summary.json, report.html and junit.xml (after `stop`); returns the summary."""
        return write_run_outputs(self.out, self.records, self.info, argv, self.known)
