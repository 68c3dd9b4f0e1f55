"""junit.xml: one testcase per result, so CI systems can show convdiff findings natively."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from harness.execution.records import Record


def write_junit(path: Path, records: Sequence[Record]) -> None:
    suites: dict[str, list[Record]] = {}
    for r in records:
        suites.setdefault(f"{r.backend}-{r.device}", []).append(r)
    root = ET.Element("testsuites", name="convdiff")
    for name, recs in sorted(suites.items()):
        failed = [r for r in recs if r.unexpected]
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(recs)), failures=str(len(failed)),
                              skipped=str(sum(r.status == "unsupported" or (r.known_issue is not None and not r.unexpected and r.status != "pass") for r in recs)))
        for r in recs:
            name = r.case_id if r.output == "out" else f"{r.case_id}[{r.output}]"
            tc = ET.SubElement(suite, "testcase", classname=f"{r.file}.{r.backend}-{r.device}", name=name,
                               time=f"{r.duration_s:.6f}")
            repro = f"convdiff repro '{r.file}::{r.case_id}' --backend {r.backend} --device {r.device}" \
                + (f" --output {r.output}" if r.output != "out" else "")
            if r.unexpected:
                el = ET.SubElement(tc, "failure", type=r.status, message=f"{r.status}: {r.message}"[:500])
                el.text = f"{r.message}\nrepro: {repro}\ntranslation:\n{r.translation}"
            elif r.status == "unsupported":
                ET.SubElement(tc, "skipped", message=f"unsupported: {r.message}")
            elif r.known_issue and r.status != "pass":
                ET.SubElement(tc, "skipped", message=f"known issue {r.known_issue}: {r.status}")
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
