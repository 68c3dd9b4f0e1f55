"""Every upstream report in cases/upstream/, as the maintainer who receives it reads and runs it.

Per root cause with a snippet (`<root>.py`; cases/upstream/README.md gives the format):
- the snippet's docstring has the fixed shape, its code is at most 20 lines, and its kind is its entries';
- `<root>.md` is current: generated from that snippet (`convdiff upstream ROOT --out cases/upstream`);
- the body (above the first `<details`) has at most 300 words of prose (code blocks not counted), one line
  per paragraph, and none of this project's vocabulary (its name, "known issue", "none found", "shows
  where", `.yaml::`, record statuses, entry ids: the list in BANNED);
- the snippet, run as `python repro.py` in an empty temporary directory with a clean environment (PATH and
  HOME only; it sets what else it needs), keeps its exit contract: exit 1 where its entry applies on this
  host under the settings the snippet makes, 0 or 1 elsewhere, never a traceback, a death by signal only for
  kind crash.

Cost: each snippet imports its framework in a fresh interpreter (2 to 15 s each on this 2-core AMD EPYC Zen 4,
2026-11-29; ExecuTorch's export and lowering the most), so `make test` runs one snippet per framework family
(`sample`: the first by root id, the costliest left out: NIGHTLY_IMPORTS, NIGHTLY_CALLS), and the nightly runs
every one (CONVDIFF_FULL_TESTS=1).

Every report is in this format, and a report that is not (a snippet whose docstring has the older `Project:` /
`Upstream:` shape, or a `.md` not generated from its snippet) fails. CONVDIFF_STRICT_REPORTS=0 turns such
failures into expected ones with the reason, for a database in the middle of a conversion.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import pytest

from harness.commands.smoke_select import full_tests
from harness.commands.upstream.contract import LiveFacts, contract
from harness.commands.upstream.scripts import imported, missing_imports, run_snippet, settings_of
from harness.commands.upstream.subjects import Root, with_reports
from harness.judge.known_issues import load_known_issues
from reports.upstream.body import body_of
from reports.upstream.docstring import CODE_LINES, Snippet, parse_snippet

pytestmark = pytest.mark.xdist_group("test_upstream_reports")

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "cases" / "upstream"
KNOWN = load_known_issues(ROOT / "cases" / "known_issues.yaml")
REPORTS = {r.id: r for r in with_reports(KNOWN) if r.snippet is not None and r.folder == UPSTREAM}
STRICT_DEFAULT = True
STRICT = os.environ.get("CONVDIFF_STRICT_REPORTS", "1" if STRICT_DEFAULT else "") not in ("", "0")
FULL = full_tests()
BODY_WORDS = 300
BANNED = re.compile(r"convdiff|known issue|none found|shows where|\.yaml::|case file|accepted_invalid|shape_mismatch"
                    r"|`rejected`|bound_ratio|\boracle\b", re.I)
ENTRY_IDS = re.compile(r"(?<![\w/-])(" + "|".join(sorted({re.escape(e.id) for e in KNOWN.entries} | {
    re.escape(r) for r in REPORTS}, key=len, reverse=True)) + r")(?![\w-])")
OLD_MD = re.compile(r"^\*\*Project:\*\*|^## Reproducer$", re.M)  # what only the older generator wrote
# make test's sample leaves out the costliest snippets (2026-11-29, 2-core AMD EPYC Zen 4, cold, CPU-s): ExecuTorch's
# export and lowering (10 and more), Keras (12.4: TensorFlow and Keras' layers), torch.compile (12.5: inductor's
# C++ build), where a plain TensorFlow or torch snippet of the same family costs 2 to 6
NIGHTLY_IMPORTS = {"executorch", "keras"}
NIGHTLY_CALLS = ("torch.compile(",)
FAMILIES = (("torch", r"pytorch/"), ("tensorflow", r"tensorflow/|keras-team/|google-ai-edge/|openxla/|onnx/tensorflow-onnx"),
            ("paddle", r"PaddlePaddle/"), ("compilers", r""))


@cache
def snippet(ident: str) -> Snippet:
    path = REPORTS[ident].snippet
    assert path is not None
    return parse_snippet(path.read_text(encoding="utf-8"))


def family(root: Root) -> str:
    tracker = root.primary.tracker if root.primary is not None else ""
    return next(name for name, pattern in FAMILIES if re.match(pattern, tracker))


def sample() -> set[str]:
    """One converted snippet per family, the first by root id, those importing NIGHTLY_IMPORTS or making
    NIGHTLY_CALLS left out."""
    chosen: dict[str, str] = {}
    for ident in sorted(REPORTS):
        path = REPORTS[ident].snippet
        source = "" if path is None else path.read_text(encoding="utf-8")
        if (snippet(ident).legacy or path is None or NIGHTLY_IMPORTS & set(imported(source))
                or any(call in source for call in NIGHTLY_CALLS)):
            continue
        chosen.setdefault(family(REPORTS[ident]), ident)
    return set(chosen.values())


def pending(ident: str) -> str:
    """Why a report is not yet in the format ('' when it is): its snippet or its generated text of the older shape."""
    md = UPSTREAM / f"{ident}.md"
    if snippet(ident).legacy:
        return "its snippet has the older docstring shape"
    if not md.exists() or OLD_MD.search(md.read_text(encoding="utf-8")):
        return f"{ident}.md not yet generated from the converted snippet (convdiff upstream {ident} --out cases/upstream)"
    return ""


def params(run: bool = False, text: bool = True) -> list:
    """Every report; one not yet converted an expected failure (unless strict); run: the sample unless FULL.
    text: the test reads the generated .md (else only the snippet, whose conversion comes first)."""
    out = []
    picked = sample() if run and not FULL else set(REPORTS)
    for ident in sorted(REPORTS):
        marks = []
        why = pending(ident) if text else ("its snippet has the older docstring shape" if snippet(ident).legacy else "")
        if why and not STRICT:
            marks.append(pytest.mark.xfail(reason=f"not yet converted: {why}; CONVDIFF_STRICT_REPORTS=1 makes it fail",
                                           strict=False))
        if ident not in picked:
            marks.append(pytest.mark.skip(reason="one snippet per framework family under make test; the nightly runs "
                                          "every one (CONVDIFF_FULL_TESTS=1)"))
        out.append(pytest.param(ident, marks=marks, id=ident))
    return out


def test_there_are_reports() -> None:
    assert len(REPORTS) > 3 and {"tf-cpu-conv3d-same-negative-pad", "litert-converter-transpose-explicit-padding",
                                 "executorch-xnnpack-transpose-empty-output-sigfpe"} <= set(REPORTS)


@pytest.mark.parametrize("ident", params(text=False))
def test_snippet_has_the_format(ident: str) -> None:
    snip, root = snippet(ident), REPORTS[ident]
    problems = list(snip.problems)
    if snip.code_lines > CODE_LINES:
        problems.append(f"{snip.code_lines} lines of code after the docstring (at most {CODE_LINES})")
    kinds = {e.kind for e in root.entries}
    if not root.entries:
        problems.append("no entry has this root")
    elif snip.kind not in kinds:  # a root's symptoms may differ in kind (a crash and a wrong value of one bug)
        problems.append(f"Kind: {snip.kind}, but its entries say {sorted(kinds)}")
    if len(root.entries) > 1 and not snip.symptoms:
        problems.append(f"a root of {len(root.entries)} entries without a Symptoms: section")
    source = (UPSTREAM / f"{ident}.py").read_text(encoding="utf-8")
    problems += [f"imports {m}" for m in imported(source) if m in ("harness", "backends", "reports", "convdiff")]
    assert not problems, f"cases/upstream/{ident}.py:\n" + "\n".join(problems)


@pytest.mark.parametrize("ident", params())
def test_report_is_current(ident: str) -> None:
    md_path = UPSTREAM / f"{ident}.md"
    assert md_path.exists(), f"no cases/upstream/{ident}.md: generate it (convdiff upstream {ident} --out cases/upstream)"
    md, snip = md_path.read_text(encoding="utf-8"), snippet(ident)
    stale = [] if md.startswith(f"# {snip.title}\n") else ["the title"]
    stale += [] if f"```python\n{snip.code.rstrip()}\n```" in md else ["the snippet's code"]
    stale += [label for label, text in snip.sections.items() if label != "Symptoms" and " ".join(text.split()) not in md]
    assert not stale, (f"cases/upstream/{ident}.md is out of date ({', '.join(stale)}): regenerate it with "
                       f"`convdiff upstream {ident} --out cases/upstream`")


def prose(body: str) -> str:
    """The body without its code blocks (as ../shared/hooks/before-stop counts it)."""
    return re.sub(r"```.*?```", "", body, flags=re.S)


def wrapped(body: str) -> list[str]:
    """Lines that continue a paragraph (outside code blocks; table rows and list items are lines of their own)."""
    out, fence, before = [], False, ""
    for line in body.splitlines():
        if line.startswith("```"):
            fence, before = not fence, ""
            continue
        if not fence and line.strip() and before.strip() and not (line.startswith(("|", "- ", "* ", "1. "))):
            out.append(line[:80])
        before = "" if fence else line
    return out


@pytest.mark.parametrize("ident", params())
def test_body_reads_as_an_issue(ident: str) -> None:
    body = body_of((UPSTREAM / f"{ident}.md").read_text(encoding="utf-8")) if (UPSTREAM / f"{ident}.md").exists() else ""
    assert body, f"no cases/upstream/{ident}.md"
    words = len(prose(body).split())
    problems = [f"{words} words of prose above <details> (at most {BODY_WORDS})"] if words > BODY_WORDS else []
    problems += [f"this project's vocabulary: {m.group(0)!r}" for m in BANNED.finditer(body)]
    problems += [f"an entry id: {m.group(0)!r}" for m in ENTRY_IDS.finditer(prose(body))]
    problems += [f"a paragraph wrapped over lines: {line!r}" for line in wrapped(body)]
    assert not problems, f"cases/upstream/{ident}.md:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def live() -> LiveFacts:
    return LiveFacts()


@pytest.mark.parametrize("ident", params(run=True, text=False))
def test_snippet_runs_standalone(ident: str, live: LiveFacts) -> None:
    root = REPORTS[ident]
    source = (UPSTREAM / f"{ident}.py").read_text(encoding="utf-8")
    missing = missing_imports(source)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    run = run_snippet(source, timeout=600.0)
    terms = contract(root.primary, live, settings_of(source), snippet(ident).kind)
    assert not run.traceback, f"{ident}.py printed a traceback:\n{run.output[-3000:]}"
    hint = " (the defect no longer shows: fixed upstream?)" if terms.exits == {1} and run.exit == 0 else ""
    assert terms.holds(run.exit, run.traceback), (f"{ident}.py ended with {run.ending()}, wants "
                                                  f"{sorted(terms.exits)}: {terms.why}{hint}\n{run.output[-3000:]}")
