"""junit.xml: one testcase per result, so CI systems can show convdiff findings natively.

An unexpected result is a `failure`. A known issue is `skipped` with type="known-issue", its id and link,
so that a CI page tells it apart from `unsupported` (type="unsupported"); a known wrong value keeps its
error/bound in the message, visible as the wrong value it is. A result a known issue predicted to fail that
now passes is a passing testcase that names the entry: a `fixed_upstream` property and a `system-out` line
(case, target, link). A target that is installed but broken, or a backend named in --backends that gave no
result, is an `error` testcase of its own: the run fails.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from backends.registry import cli_name
from harness.execution.records import Record

WRONG_VALUES = ("mismatch", "shape_mismatch", "accepted_invalid")


def _repro(r: Record, results: Path) -> str:
    """The command that reproduces `r`, run from where convdiff ran: the record is taken from the run's
    results.jsonl (a case file outside ./cases needs no --cases), a one-off adapter named by module:Class."""
    return (f"convdiff repro '{r.file}::{r.case_id}' --backend {cli_name(r.backend)} --device {r.device}"
            + (f" --output {r.output}" if r.output != "out" else "") + f" --results {shlex.quote(str(results))}")


def _known_message(r: Record, link: str) -> str:
    size = f", error/bound {r.bound_ratio:.3g}" if r.bound_ratio is not None else ""
    what = "known wrong value" if r.status in WRONG_VALUES else "known issue"
    return f"{what}: {r.status}{size} ({r.known_issue}: {link})"


def write_junit(path: Path, records: Sequence[Record], summary: dict[str, Any] | None = None) -> None:
    summary = summary or {}
    results = path.parent / "results.jsonl"  # written beside it (reports/__init__.py, reports/merge.py)
    links = {k: v[1] for k, v in summary.get("known_issues", {}).items() if isinstance(v, list | tuple) and len(v) > 1}
    # each finding group's common factor (harness/judge/common.py), on its unexpected results
    commons = {(d["backend"], d["device"], d["op"], d["status"], d["diagnosis"], d["known_issue"], d["output"]): d["common"]
               for d in summary.get("findings", []) if d.get("common")}
    suites: dict[str, list[Record]] = {}
    for r in records:
        suites.setdefault(f"{r.backend}-{r.device}", []).append(r)
    root = ET.Element("testsuites", name="convdiff")
    for name, recs in sorted(suites.items()):
        failed = [r for r in recs if r.unexpected]
        skipped = sum(r.status == "unsupported" or (r.known_issue is not None and not r.unexpected and r.status != "pass")
                      for r in recs)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(recs)), failures=str(len(failed)),
                              skipped=str(skipped))
        for r in recs:
            name = r.case_id if r.output == "out" else f"{r.case_id}[{r.output}]"
            tc = ET.SubElement(suite, "testcase", classname=f"{r.file}.{r.backend}-{r.device}", name=name,
                               time=f"{r.duration_s:.6f}")
            if r.unexpected:
                el = ET.SubElement(tc, "failure", type=r.status, message=f"{r.status}: {r.message}"[:500])
                common = commons.get((r.backend, r.device, r.op, r.status, r.diagnosis, r.known_issue, r.output))
                el.text = (f"{r.message}\n" + (f"in common with its group: {common}\n" if common else "")
                           + f"repro: {_repro(r, results)}\ntranslation:\n{r.translation}")
            elif r.status == "unsupported":
                ET.SubElement(tc, "skipped", type="unsupported", message=f"unsupported: {r.message}")
            elif r.known_issue and r.status != "pass":
                el = ET.SubElement(tc, "skipped", type="known-issue",
                                   message=_known_message(r, links.get(r.known_issue, ""))[:500])
                el.text = f"{r.message}\nknown issue file: {r.known_issue_file or ''}\nrepro: {_repro(r, results)}"
            elif r.fixed_upstream:  # a pass that a known issue predicted to fail: named, for someone to retire it
                props = ET.SubElement(tc, "properties")
                ET.SubElement(props, "property", name="fixed_upstream", value=str(r.known_issue))
                ET.SubElement(tc, "system-out").text = (
                    f"known issue {r.known_issue} now passes (fixed upstream?): {r.file}::{r.case_id} on "
                    f"{r.backend}-{r.device}; {links.get(r.known_issue or '', '')} ({r.known_issue_file or ''})")
    problems = {**{t: ("broken", why) for t, why in summary.get("broken_targets", {}).items()},
                **{n: ("no-result", why) for n, why in summary.get("missing_targets", {}).items()}}
    if problems:
        suite = ET.SubElement(root, "testsuite", name="convdiff-targets", tests=str(len(problems)), failures="0",
                              errors=str(len(problems)), skipped="0")
        for target, (kind, why) in sorted(problems.items()):
            tc = ET.SubElement(suite, "testcase", classname="convdiff.targets", name=target, time="0")
            text = (f"{target} is installed but cannot run: {why}" if kind == "broken"
                    else f"{target} was named in --backends and gave no result ({why})")
            ET.SubElement(tc, "error", type=kind, message=text[:500]).text = text
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
