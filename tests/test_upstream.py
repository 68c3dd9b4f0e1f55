"""cases/upstream/: the upstream-ready reproducers keep their contract, and `convdiff upstream` reports any entry.

The contract (cases/upstream/README.md): every known issue whose link says "none found" has `<id>.py` and
`<id>.md`; each script's docstring has the fixed shape; it runs on every host and exits 1 where its entry
applies (the entry's host selector matches the live host facts of its backend, or it has none, and `pass` is
not among its outcomes), 0 or 1 elsewhere, never with a traceback; each `.md` embeds its script verbatim and
the docstring's title and sections (regenerate: `convdiff upstream <id> --out cases/upstream`).

Time: the scripts run forked from the warm framework templates (tests/helpers.py run_named_scripts), grouped
by framework, so each framework is imported once, not once per script (2026-11-28, this 2-core host: 95 scripts
in 86 s of wall in a pytest process of their own, every framework imported cold). Under make test, the scripts that start fresh interpreters of their own
(`starts_interpreters`: each child imports its framework again) or export and lower a model with ExecuTorch
(`NIGHTLY_IMPORTS`) are skipped: the nightly's `convdiff upstream --check` step runs every script in a fresh
interpreter against the same contract, and CONVDIFF_FULL_TESTS=1 runs them here too.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from harness.commands.cli import main
from harness.commands.smoke_select import FULL_TESTS_ENV
from harness.commands.upstream import build, check, entry_of, resolve, scripts
from harness.commands.upstream_build import imported, witness
from harness.commands.upstream_contract import LiveFacts, contract
from harness.execution.host import cpu_facts
from harness.judge.known_issues import KnownIssues, layered, load_known_issues
from reports.upstream import SECTIONS, parse_docstring, render

pytestmark = pytest.mark.xdist_group("test_upstream")

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "cases" / "upstream"
KNOWN = load_known_issues(ROOT / "cases" / "known_issues.yaml")
SCRIPTS = sorted(p.stem for p in UPSTREAM.glob("*.py"))
BY_ID = {e.id: e for e in KNOWN.entries}
ENTRY = {i: entry_of(i, KNOWN) for i in SCRIPTS}  # by id, or the entry that names it as a further reproducer
REPORTS = sorted(p.stem for p in UPSTREAM.glob("*.md") if p.stem != "README" and (UPSTREAM / f"{p.stem}.py").exists())
FULL = os.environ.get(FULL_TESTS_ENV, "") not in ("", "0")


NIGHTLY_IMPORTS = {"executorch"}  # exports and lowers a model in every run: 2.5 to 9.4 s each, forked, on this host


def nightly_only(source: str) -> bool:
    """Left to the nightly under make test: starts interpreters of its own, or imports NIGHTLY_IMPORTS."""
    return starts_interpreters(source) or bool(NIGHTLY_IMPORTS.intersection(imported(source)))


def starts_interpreters(source: str) -> bool:
    """A script that runs parts of itself in fresh interpreters (a crash provoked in a child, a cache read under
    another ISA setting): each child imports its framework again, which forking cannot save (2026-11-28, this
    2-core host: litert-int8-calibration-ignores-failed-invoke 60 CPU-s in eight children,
    inductor-fx-cache-ignores-aten-capability 43, paddle-inference-onednn-conv2d-leaky-relu-segfault 10; the
    others 0.3 to 7 beyond their framework's import). The nightly's (module docstring)."""
    return "sys.executable" in source


# --- (a) every "none found" entry has its report -----------------------------------------------------------


def test_every_none_found_entry_has_its_script_and_report() -> None:
    none_found = [e.id for e in KNOWN.entries if e.link.lower().startswith("none found")]
    missing = [f"{i}.{ext}" for i in none_found for ext in ("py", "md") if not (UPSTREAM / f"{i}.{ext}").exists()]
    assert not missing, f"{len(missing)} missing in cases/upstream/ (of {len(none_found)} entries):\n" + "\n".join(missing)


NO_ENTRY = {"inductor-fx-cache-ignores-aten-capability",  # inductor's on-disk cache, not a case (README.md)
            # the reduction without a conv of paddle-inference-onednn-float64-transpose-bias-act's pass
            "paddle-inference-onednn-float64-elementwise-act-dropped"}


def test_every_script_names_a_known_issue() -> None:
    """A script is named by its entry's id (or named in its entry's reason, a further reproducer): one whose entry
    was renamed or removed is held to no contract."""
    orphans = [i for i in SCRIPTS if ENTRY[i] is None and i not in NO_ENTRY]
    assert not orphans, f"scripts in cases/upstream/ named after no known issue: {orphans}"


# --- (d) each docstring has the contract's shape -------------------------------------------------------------


@pytest.mark.parametrize("ident", SCRIPTS)
def test_docstring_follows_the_contract(ident: str) -> None:
    path = UPSTREAM / f"{ident}.py"
    source = path.read_text()
    doc = parse_docstring(source)
    problems = [f"{path.relative_to(ROOT)}:{p.removeprefix('line ')}" for p in doc.problems]
    problems += [f"imports {m}: a reproducer needs NumPy and the framework only" for m in imported(source)
                 if m in ("harness", "backends", "reports", "convdiff", "tests")]
    entry = ENTRY[ident]
    if entry is not None and not doc.problems:
        if entry.tracker and doc.project != entry.tracker:
            problems.append(f"Project {doc.project} but the entry's tracker is {entry.tracker}")
        if doc.comment_for and doc.comment_for not in entry.link:
            problems.append(f"a comment for {doc.comment_for}, which the entry's link does not name: {entry.link}")
        if not doc.comment_for and not entry.link.lower().startswith("none found"):
            problems.append(f"Upstream: none found, but the entry links {entry.link}")
    assert not problems, "\n".join(problems)


# --- (c) each report is current -------------------------------------------------------------------------------


@pytest.mark.parametrize("ident", REPORTS)
def test_report_is_current(ident: str) -> None:
    source = (UPSTREAM / f"{ident}.py").read_text()
    md = (UPSTREAM / f"{ident}.md").read_text()
    doc = parse_docstring(source)
    stale = [] if f"```python\n{source.rstrip()}\n```" in md else ["the script, verbatim"]
    stale += [] if md.startswith(f"# {doc.title}\n") else ["the title"]
    sections = {**doc.sections, **{k: doc.fields[k] for k in ("Related", "Checked") if doc.fields.get(k)}}
    stale += [f"section {name}" for name, text in sections.items() if f"## {name}\n\n{text}\n" not in md]
    assert not stale, (f"cases/upstream/{ident}.md is out of date ({', '.join(stale)}): regenerate it with "
                       f"`convdiff upstream {ident} --out cases/upstream`")


# --- (b) every script keeps the exit contract on this host -----------------------------------------------------


def _chosen() -> list[str]:
    return [i for i in SCRIPTS if FULL or not nightly_only((UPSTREAM / f"{i}.py").read_text())]


@pytest.fixture(scope="module")
def script_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    """{id: (exit status, output)} of every chosen script, forked from its framework's warm template."""
    from tests.helpers import run_named_scripts

    chosen = _chosen()
    tmp = tmp_path_factory.mktemp("upstream")
    runs = run_named_scripts([(i, (UPSTREAM / f"{i}.py").read_text()) for i in chosen], tmp)
    return dict(zip(chosen, runs))


@pytest.fixture(scope="module")
def live() -> LiveFacts:
    return LiveFacts()


@pytest.mark.parametrize("ident", SCRIPTS)
def test_script_keeps_the_exit_contract(ident: str, script_runs: dict[str, tuple[int, str]], live: LiveFacts) -> None:
    if ident not in script_runs:
        pytest.skip("starts fresh interpreters or lowers a model (seconds each): left to the nightly's "
                    "`convdiff upstream --check` (run here with CONVDIFF_FULL_TESTS=1)")
    from harness.commands.upstream import missing_imports

    missing = missing_imports(UPSTREAM / f"{ident}.py")
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    rc, out = script_runs[ident]
    terms = contract(ENTRY[ident], live)
    assert "Traceback (most recent call last)" not in out, f"{ident}.py printed a traceback:\n{out[-3000:]}"
    hint = " (the defect no longer shows: fixed upstream?)" if terms.exits == {1} and rc == 0 else ""
    assert rc in terms.exits, f"{ident}.py exited {rc}, wants {sorted(terms.exits)}: {terms.why}{hint}\n{out[-3000:]}"


# --- the command: any entry renders; a sample runs; --check's verdicts; bad input ----------------------------


def test_every_entry_renders_without_running() -> None:
    known = KnownIssues(KNOWN.entries)
    problems = []
    for entry in known.entries:
        ident, path, found = resolve(entry.id, known)
        report = build(ident, path, found, run=False, timeout=1.0, live=None)
        md = render(report)
        if not report.title or "## Environment" not in md or "Not run: " not in md:
            problems.append(f"{entry.id}: incomplete report")
        if path is None and witness(entry) is None:
            problems.append(f"{entry.id}: no case of the corpus matches it (and it has no script)")
        if path is None and report.sections.get("What happens") != entry.reason:
            problems.append(f"{entry.id}: the reason is not the report's 'What happens'")
        if entry.link.lstrip().startswith("http") and path is None and not md.split("\n", 3)[2].startswith("**Comment for http"):
            problems.append(f"{entry.id}: links an upstream thread, but the report is not framed as a comment for it")
    assert not problems, "\n".join(problems)


def test_witness_report_runs_the_case_and_its_script(live: LiveFacts) -> None:
    """A sample with a real run: an entry without a script of its own, its witness case run on torch."""
    entry = BY_ID["torch-cpu-bf16-transpose3d-without-onednn-bf16"]
    report = build(entry.id, None, entry, run=True, timeout=300.0, live=live)
    assert report.script.startswith("#!/usr/bin/env python3") and "import torch" in report.script
    assert report.run.exit in (0, 1) and not report.run.traceback and "verdict:" in report.run.output
    facts = report.env.facts["torch"]
    applies = facts["torch_mkldnn_bf16"] is False  # the entry's host selector, from the live worker
    assert report.env.applies.startswith("applies" if applies else "does not apply"), report.env.applies
    assert report.run.exit == (1 if applies else 0), report.run.output
    assert "Expected:" in report.expected_vs_actual and report.title.startswith("torch ")


def _fixture(tmp_path: Path, scripts: dict[str, str], entries: str) -> Path:
    (tmp_path / "upstream").mkdir()
    known = tmp_path / "known_issues.yaml"
    known.write_text("issues:\n" + textwrap.indent(textwrap.dedent(entries), "  "))
    for name, body in scripts.items():
        (tmp_path / "upstream" / f"{name}.py").write_text(DOC.format(title=name) + textwrap.dedent(body))
    return known


DOC = '''"""{title}: a fixture

Project: numpy/numpy (https://github.com/numpy/numpy/issues)
Upstream: none found (a test fixture)
Related: none
Checked: 2026-11-28, numpy, searched nowhere

What happens: the fixture exits as its body says.

Expected: nothing; it is a fixture.

Mechanism: not known.

Host: any
"""
'''


def test_check_holds_each_script_to_its_entry(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    vendor = cpu_facts()["cpu_vendor"]
    known = _fixture(tmp_path, {
        "shows": "raise SystemExit(1)\n",
        "fixed": "print('no defect')\n",
        "crashes": "raise ValueError('not caught')\n",
        "elsewhere": "print('not shown on this host: another vendor')\n",
        "either": "print('ok')\n",
        "orphan": "raise SystemExit(3)\n",
    }, f"""\
        - {{id: shows, backend: torch, status: mismatch, reason: r, link: none found}}
        - {{id: fixed, backend: torch, status: mismatch, reason: r, link: none found}}
        - {{id: crashes, backend: torch, status: mismatch, reason: r, link: none found}}
        - {{id: elsewhere, backend: torch, host: {{cpu_vendor: NoSuchVendor}}, status: mismatch, reason: r, link: none found}}
        - {{id: either, backend: torch, host: {{cpu_vendor: {vendor}}}, status: [mismatch, pass], reason: r, link: none found}}
        """)
    found = [s for s in scripts(layered([str(known)], [])) if Path(s[1]).parent == tmp_path / "upstream"]
    assert [s[0] for s in found] == ["crashes", "either", "elsewhere", "fixed", "orphan", "shows"]
    assert {s[0]: s[2] is not None for s in found}["orphan"] is False
    status = check(found, 60.0, str(tmp_path / "status.json"))
    rows = {r["id"]: r for r in json.loads((tmp_path / "status.json").read_text())["scripts"]}
    assert status == 1
    assert {i: r["holds"] for i, r in rows.items()} == {
        "shows": True, "fixed": False, "crashes": False, "elsewhere": True, "either": True, "orphan": False}
    assert rows["fixed"]["fixed_upstream"] and "fixed upstream?" in rows["fixed"]["verdict"]
    assert rows["crashes"]["traceback"] and rows["orphan"]["exit"] == 3
    assert rows["elsewhere"]["why"].startswith("does not apply") and rows["shows"]["wants"] == [1]
    table = capsys.readouterr().out
    assert "6 scripts: 3 hold, 3 fail" in table


def test_report_of_a_script(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    known = _fixture(tmp_path, {"shows": "import numpy as np\nprint('numpy', np.__version__)\nraise SystemExit(1)\n"},
                     "- {id: shows, backend: torch, status: mismatch, reason: r, link: none found, tracker: numpy/numpy}\n")
    out = tmp_path / "out"
    assert main(["upstream", "shows", "--known-issues", str(known), "--out", str(out)]) == 0
    md = (out / "shows.md").read_text()
    source = (tmp_path / "upstream" / "shows.py").read_text()
    assert md.startswith("# shows: a fixture\n") and f"```python\n{source.rstrip()}\n```" in md
    assert "Exit status 1 (the defect shows)" in md and "numpy " in md.split("## Output on this host")[1]
    for name in SECTIONS:
        assert f"## {name}\n\n" in md
    assert "**Project:** numpy/numpy (https://github.com/numpy/numpy/issues)" in md
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["upstream", "no-such-entry", "--no-run"], "no known issue 'no-such-entry'"),
    (["upstream", "x", "--known-issues", "/nonexistent/known.yaml"], "/nonexistent/known.yaml:0: known-issues: no such file"),
    (["upstream", "--all"], "--all writes one file per report: give --out DIR"),
    (["upstream", "--json", "x.json", "paddle-same-dilation-ignored"], "--json goes with --check"),
    (["upstream"], "give a known issue's ID, --all or --check"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err



def test_docstring_problems_name_their_line() -> None:
    source = '"""A title\nthat runs on\n\nProject: numpy\nUpstream: maybe\nChecked: yesterday\n\nExpected: e\n\nWhat happens: w\n"""\n'
    problems = parse_docstring(source).problems
    assert "line 1: the title must be one line" in problems
    assert "line 4: missing the 'Related:' line after the title" in problems
    assert "line 4: Project must be 'owner/repo (tracker URL)', got 'numpy'" in problems
    assert "line 4: Upstream must be 'none found ...' or 'comment for <URL>', got 'maybe'" in problems
    assert "line 4: Checked must begin with the date, YYYY-MM-DD, got 'yesterday'" in problems
    assert "line 1: missing section(s): Mechanism:, Host:" in problems
    good = DOC.format(title="T").replace("Upstream: none found (a test fixture)", "Upstream: comment for https://x.org/1.")
    doc = parse_docstring(good)
    assert not doc.problems and doc.comment_for == "https://x.org/1" and doc.project == "numpy/numpy"
    assert list(doc.sections) == list(SECTIONS) and doc.sections["Mechanism"] == "not known."


def test_record_title_names_what_matters() -> None:
    from harness.execution.records import Record
    from harness.model.build import make_case
    from reports.repro.issue import record_title

    case = make_case(id="t", op="conv_transpose2d", in_channels=4, out_channels=6, input_size=[5, 4], kernel_size=3,
                     stride=2, padding=1, output_padding=1, groups=2, bias=True, file="x.yaml")
    rec = Record(case_id="t", file="x.yaml", op=case.op, params=case.params(), backend="torch", backend_version="2.13.0",
                 device="cpu", dtype="float32", status="mismatch", bound_ratio=41.5, diagnosis="zero_fill_output_padding")
    assert record_title(rec) == ("torch 2.13.0: conv_transpose2d 4->6, input 5x4, kernel 3x3, padding (1,1)x(1,1), "
                                 "stride 2x2, output padding 1x1, groups 2, bias, float32 gives mismatch "
                                 "(zero_fill_output_padding), 41.5 x the error bound")
    rec.status, rec.message, rec.diagnosis = "rejected", "RuntimeError: no\nsecond line", None
    assert record_title(rec).endswith("gives rejected: RuntimeError: no")


def test_repro_issue_text(capsys: pytest.CaptureFixture) -> None:
    """`convdiff repro --issue`: a seeded bug (the kernel flipped) reported as an issue text, its script run here."""
    assert main(["repro", "basic_bias", "--backend", "mutant:flip_kernel", "--cases", str(ROOT / "cases" / "conv2d.yaml"),
                 "--issue"]) == 0
    text = capsys.readouterr().out
    title = text.splitlines()[0]
    assert title.startswith("# mutant:flip_kernel ") and "conv2d 4->6" in title and "gives mismatch (flip_kernel)" in title
    for part in ("## Environment", "## Reproducer", "```python\n#!/usr/bin/env python3", "## Output on this host",
                 "Exit status 1 (the defect shows)", "verdict: mismatch", "## Expected vs actual", "x the bound"):
        assert part in text, part


# --- the entry's upstream fields (harness/judge/entry_upstream.py) ------------------------------------------

FIELDS = """\
issues:
  - id: a-b
    backend: torch
    cases: {op: conv2d}
    status: mismatch
    reason: r
    link: none found
    kind: wrong-value
    root: a-root
    component: {name: oneDNN, tracker: uxlfoundation/oneDNN, where: "brg_conv_fwd:avx512_core, oneDNN v3.6.2"}
    searched: ["pytorch/pytorch: conv wrong", "uxlfoundation/oneDNN: brg_conv_fwd out_w 1"]
    latest: {version: "2.14.1", result: shows, date: 2026-11-29, note: "capped by pip"}
"""


def test_upstream_fields_load(tmp_path: Path) -> None:
    (tmp_path / "known_issues.yaml").write_text(FIELDS)
    entry = load_known_issues(tmp_path / "known_issues.yaml").entries[0]
    assert (entry.kind, entry.root, entry.asks) == ("wrong-value", "a-root", "a fix")
    assert entry.component is not None and entry.component.tracker_url == "https://github.com/uxlfoundation/oneDNN/issues"
    assert entry.searched[1].startswith("uxlfoundation/oneDNN: ")
    assert entry.latest is not None and entry.latest.sentence("torch") == "still shows in torch 2.14.1 (2026-11-29; capped by pip)"
    (tmp_path / "known_issues.yaml").write_text(FIELDS.replace("    root: a-root\n", "").replace("kind: wrong-value", "kind: crash"))
    entry = load_known_issues(tmp_path / "known_issues.yaml").entries[0]
    assert entry.root == "a-b" and entry.asks == "a fix"


@pytest.mark.parametrize("old, new, message", [
    ("kind: wrong-value", "kind: wrong", ":8: kind: unknown kind 'wrong'"),
    ("root: a-root", "root: A root", ":9: root: must be an id"),
    ("tracker: uxlfoundation/oneDNN", "tracker: oneDNN", ":10: component.tracker: must be a GitHub owner/repo"),
    ("where:", "wher:", ":10: component.wher: unknown field"),
    ('"uxlfoundation/oneDNN: brg_conv_fwd out_w 1"', '"brg"', ":11: searched[1]: must read 'owner/repo: what was searched'"),
    ("result: shows", "result: maybe", ":12: latest.result: unknown result 'maybe'"),
    ("date: 2026-11-29", "date: 29.11.2026", ":12: latest.date: must be YYYY-MM-DD"),
    ('version: "2.14.1", ', "", ":12: latest.version: required field is missing"),
])
def test_upstream_field_problems_are_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    from harness.model.yamlmap import InputError

    assert old in FIELDS
    (tmp_path / "known_issues.yaml").write_text(FIELDS.replace(old, new))
    with pytest.raises(InputError) as err:
        load_known_issues(tmp_path / "known_issues.yaml")
    assert message in str(err.value), str(err.value)
