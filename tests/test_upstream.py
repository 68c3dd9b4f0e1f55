"""`convdiff upstream`: entries' upstream fields, roots, the report pipeline, --check, --latest's record, --draft.

The reports of cases/upstream/ themselves (word counts, snippet lines, vocabulary, each snippet run as a
maintainer would) are tests/test_upstream_reports.py's. Here: the machinery, on fixtures and a few real runs
(2026-11-29, 2-core AMD EPYC Zen 4: about 25 s in all, most of it one witness run on torch and a mutant and
two draft snippets run with torch).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.commands.cli import main
from harness.commands.upstream.build import build, package_of
from harness.commands.upstream.check import check
from harness.commands.upstream.latest import record_latest
from harness.commands.upstream.subjects import resolve, roots, tally, with_reports
from harness.execution.records import Record
from harness.judge.entry_upstream import Latest
from harness.judge.known_issues import KnownIssues, layered, load_known_issues
from harness.model.build import make_case
from reports.upstream.body import body_of, render
from reports.upstream.docstring import parse_snippet
from reports.upstream.environment import FORMS, environment_block
from reports.upstream.others import classify, disagreement, table

pytestmark = pytest.mark.xdist_group("test_upstream")

ROOT = Path(__file__).resolve().parents[1]
KNOWN = load_known_issues(ROOT / "cases" / "known_issues.yaml")


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


# --- roots and the reports of the database ----------------------------------------------------------------


def test_entries_sharing_a_root_make_one_report() -> None:
    all_roots = roots(KNOWN)
    assert sum(len(r.entries) for r in all_roots.values()) == len({e.id for e in KNOWN.entries})
    for root in all_roots.values():
        assert all(e.root == root.id for e in root.entries)
        for e in root.entries:
            assert resolve(e.id, KNOWN).id == root.id
    line = tally(KNOWN)
    assert line.startswith(f"{len(KNOWN.entries)} entries make {len(all_roots)} root causes"), line


def test_every_report_renders_without_running() -> None:
    """The body of every root with a snippet, rendered from the files alone (no snippet, worker or probe run)."""
    problems = []
    for root in with_reports(KNOWN):
        md = render(build(root, run=False, timeout=1.0))
        body = body_of(md)
        if not body.startswith("# ") or (root.snippet is not None and "[not run: --no-run]" not in body):
            problems.append(f"{root.id}: incomplete body")
        if root.entries and "```text" not in body:
            problems.append(f"{root.id}: no environment block")
    assert not problems, "\n".join(problems)


# --- a fixture database: its snippet, checks and contract ---------------------------------------------------

SNIPPET = '''"""{title}

Kind: {kind}
Ask: A fix.

What happens: the fixture exits as its code says.

Expected: nothing; it is a fixture.

Mechanism: not located (a fixture).
"""
'''


def _fixture(tmp_path: Path, scripts: dict[str, str], entries: str, kind: str = "wrong-value") -> Path:
    (tmp_path / "upstream" / "checks").mkdir(parents=True)
    known = tmp_path / "known_issues.yaml"
    known.write_text("issues:\n" + textwrap.indent(textwrap.dedent(entries), "  "))
    for name, body in scripts.items():
        doc = SNIPPET.format(title=f"{name}: a fixture", kind=kind) if not name.startswith("checks/") else ""
        (tmp_path / "upstream" / f"{name}.py").write_text(doc + textwrap.dedent(body))
    return known


def test_check_holds_each_script_to_its_entry(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    known = _fixture(tmp_path, {
        "shows": "import os, sys\nassert set(os.environ) <= {'PATH', 'HOME', 'PYTHONUNBUFFERED', 'LC_CTYPE'}, os.environ\n"
                 "sys.exit(1)\n",
        "fixed": "print('no defect')\n",
        "crashes": "raise ValueError('not caught')\n",
        "checks/shows": "raise SystemExit(1)\n",
        "either": "print('ok')\n",
    }, """\
        - {id: shows, backend: torch, status: mismatch, reason: r, link: none found, kind: wrong-value}
        - {id: fixed, backend: torch, status: mismatch, reason: r, link: none found, kind: wrong-value}
        - {id: crashes, backend: torch, status: mismatch, reason: r, link: none found}
        - {id: either, backend: torch, status: [mismatch, pass], reason: r, link: none found}
        """)
    found = [r for r in with_reports(layered([str(known)], [])) if r.folder == tmp_path / "upstream"]
    assert [r.id for r in found] == ["crashes", "either", "fixed", "shows"]
    status = check(found, 60.0, str(tmp_path / "status.json"))
    rows = {(r["role"], r["id"]): r for r in json.loads((tmp_path / "status.json").read_text())["scripts"]}
    assert status == 1
    assert {k: r["holds"] for k, r in rows.items()} == {
        ("snippet", "shows"): True, ("check", "shows"): True, ("snippet", "fixed"): False,
        ("snippet", "crashes"): False, ("snippet", "either"): True}
    assert rows[("snippet", "fixed")]["fixed_upstream"] and "fixed upstream?" in rows[("snippet", "fixed")]["verdict"]
    assert rows[("snippet", "crashes")]["traceback"]
    assert "5 scripts: 3 hold, 2 fail" in capsys.readouterr().out


@pytest.mark.parametrize("kind, holds", [("crash", True), ("wrong-value", False)])
def test_a_signal_death_keeps_the_contract_only_for_a_crash(tmp_path: Path, kind: str, holds: bool) -> None:
    known = _fixture(tmp_path, {"dies": "import os, signal\nos.kill(os.getpid(), signal.SIGFPE)\n"},
                     f"- {{id: dies, backend: torch, status: crash, reason: r, link: none found, kind: {kind}}}\n", kind)
    found = [r for r in with_reports(layered([str(known)], [])) if r.id == "dies"]
    assert check(found, 60.0, str(tmp_path / "s.json")) == (0 if holds else 1)
    row = json.loads((tmp_path / "s.json").read_text())["scripts"][0]
    assert row["exit"] == -8 and row["holds"] is holds


def test_report_of_a_root_with_its_witness_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A root of two entries on a seeded bug (the kernel flipped): one report listing both, the snippet run in a
    clean environment, the witness case run on torch beside it, and the table saying torch gives right values."""
    known = _fixture(tmp_path, {"flip-root": "import numpy as np\nprint('numpy', np.__version__)\nraise SystemExit(1)\n"},
                     """\
        - {id: flip-a, backend: "mutant:flip_kernel", cases: {op: conv2d, groups: 1, expect: valid}, status: mismatch,
           reason: r, link: none found, tracker: numpy/numpy, kind: wrong-value, root: flip-root}
        - {id: flip-b, backend: "mutant:flip_kernel", cases: {op: conv1d}, status: mismatch, reason: r,
           link: "none found; related: https://github.com/numpy/numpy/issues/1", kind: wrong-value, root: flip-root}
        """)
    out = tmp_path / "out"
    assert main(["upstream", "flip-b", "--known-issues", str(known), "--out", str(out), "--others", "torch"]) == 0
    md = (out / "flip-root.md").read_text()
    body = body_of(md)
    assert body.startswith("# flip-root: a fixture\n") and "[exit status 1]" in body and "numpy " in body
    assert "| PyTorch | right values |" in body, body
    assert "Every other implementation follows torch.nn.Conv" in body
    assert "Related: https://github.com/numpy/numpy/issues/1" in body and "**Ask:** A fix." in body
    assert "<details><summary>Full check</summary>" in md and "mutant" not in body
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["upstream", "no-such-entry", "--no-run"], "no known issue or root 'no-such-entry'"),
    (["upstream", "x", "--known-issues", "/nonexistent/known.yaml"], "/nonexistent/known.yaml:0: known-issues: no such file"),
    (["upstream", "--all"], "--all writes one file per report: give --out DIR"),
    (["upstream", "--json", "x.json", "paddle-same-dilation-ignored"], "--json goes with --check"),
    (["upstream", "--record", "paddle-same-dilation-ignored"], "--record goes with --latest"),
    (["upstream"], "give a known issue's ID, --all or --check"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_snippet_docstring_problems_name_their_line() -> None:
    source = '"""A title\nthat wraps\n\nKind: wrong\n\nWhat happens: w\nstill w\n\nExpected: e\n"""\nprint()\n'
    problems = parse_snippet(source).problems
    assert "line 1: the title must be one line" in problems
    assert any(p.startswith("line 4: Kind must be one of wrong-value") for p in problems)
    assert "line 4: missing the 'Ask:' line" in problems
    assert "line 6: 'What happens:' must be one line (no hard wrapping)" in problems
    assert "line 1: missing section(s): Mechanism:" in problems
    good = parse_snippet(SNIPPET.format(title="T", kind="crash") + "import sys\n\nsys.exit(1)\n")
    assert not good.problems and good.code_lines == 3 and good.kind == "crash"
    legacy = parse_snippet('"""T\n\nProject: a/b (https://x)\nUpstream: none found\n\nWhat happens: w\nw2\n"""\n')
    assert legacy.legacy and legacy.sections["What happens"] == "w w2"


# --- --latest --record: a small edit of the named entries only --------------------------------------------


def test_record_latest_edits_only_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "known_issues.yaml"
    text = textwrap.dedent("""\
        issues:
          # a comment that stays
          - id: one
            backend: torch
            status: mismatch
            reason: r
            link: none found
          - id: two
            backend: torch
            status: mismatch
            reason: >-
              folded
            link: none found
            latest:
              version: "1.0"
              result: shows
              date: 2026-01-01
          - id: three
            backend: torch
            status: mismatch
            reason: r
            link: none found
        """)
    path.write_text(text)
    latest = Latest("2.0", "fixed", "2026-11-29", 'newest "release"')
    assert record_latest(path, ["two", "one"], latest) == ["two", "one"]
    after = path.read_text()
    line = '    latest: {version: "2.0", result: fixed, date: 2026-11-29, note: "newest \'release\'"}\n'
    assert after.count(line) == 2 and "result: shows" not in after and "# a comment that stays" in after
    assert after.replace(line, "") == text.replace('    latest:\n      version: "1.0"\n      result: shows\n'
                                                   '      date: 2026-01-01\n', "")
    entries = {e.id: e for e in load_known_issues(path).entries}
    assert entries["one"].latest == Latest("2.0", "fixed", "2026-11-29", "newest 'release'")
    assert entries["three"].latest is None


# --- others, environment forms --------------------------------------------------------------------------------


def _rec(backend: str, status: str, version: str = "1.0", message: str = "") -> Record:
    return Record(case_id="c", file="f.yaml", op="conv2d", params={}, backend=backend, backend_version=version,
                  device="cpu", dtype="float32", status=status, message=message, max_abs_err=1.0)


def test_others_are_classified_against_the_reported_values() -> None:
    wrong, right = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    records = [_rec("tvm-onnx-import", "mismatch", "0.27.0"), _rec("onnxruntime", "mismatch", "1.32.0"),
               _rec("onnx-reference", "pass", "1.17.0"), _rec("openvino", "rejected", "2026.4.1", "Exception: no\nmore"),
               _rec("jax", "unsupported", "0.10.2", "cannot")]
    arrays = {"tvm-onnx-import": wrong, "onnxruntime": wrong + 1e-9, "onnx-reference": right}
    reported, others = classify(records, arrays, "tvm-onnx-import", invalid=False)
    assert reported is not None and reported.verdict == "same-wrong"
    assert [(o.label, o.verdict) for o in others] == [
        ("ONNX Runtime 1.32.0", "same-wrong"), ("onnx.reference 1.17.0", "right"), ("OpenVINO 2026.4.1", "refuses"),
        ("JAX 0.10.2 (eager)", "cannot-express")]
    rows = table(others)
    assert "| ONNX Runtime | the same wrong values |" in rows and "| OpenVINO | refuses: Exception: no |" in rows
    assert not any("JAX" in r for r in rows)
    said = disagreement(reported, others, "the ONNX spec")
    assert said == "The implementations disagree. The same values as the reported one: ONNX Runtime; the values of " \
                   "the ONNX spec: 1 other."


def test_newest_release_checked_is_the_snippets_framework_where_the_tracker_has_several() -> None:
    reports = {r.id: r for r in with_reports(KNOWN)}
    xla, tf = reports["xla-gpu-float64-conv-scalar-multiply-float32"], reports["tf-cpu-half-accumulation"]
    assert xla.snippet is not None and tf.snippet is not None
    assert package_of(xla, xla.snippet.read_text(encoding="utf-8")) == "jax"  # openxla/xla, reached through JAX here
    assert package_of(tf, "import jax\n") == "tensorflow-cpu"  # a single-framework tracker: its own distribution


def test_many_different_refusals_are_one_row() -> None:
    records = [_rec("litert", "accepted_invalid", "2.3.0")] + [
        _rec(b, "rejected", "1.0", f"ValueError: check {i} failed") for i, b in enumerate(("torch", "paddle", "tvm", "jax"))]
    _, others = classify(records, {}, "litert", invalid=True)
    assert table(others[:3]) == ["| implementation | result |", "| --- | --- |", "| PyTorch | refuses: ValueError: check 0 failed |",
                                 "| Paddle | refuses: ValueError: check 1 failed |", "| TVM | refuses: ValueError: check 2 failed |"]
    assert table(others)[2:] == ["| PyTorch, Paddle, TVM, JAX | refuses, with 4 different messages (in the details) |"]


@pytest.mark.parametrize("tracker", sorted(FORMS))
def test_environment_in_each_trackers_form(tracker: str) -> None:
    facts = {"os": "Linux-6", "distro": "Debian 12", "machine": "x86_64", "python": "3.11.7", "cpu": "AMD EPYC",
             "flags": ["avx2"], "settings": {"ONEDNN_MAX_CPU_ISA": "AVX2"}, "versions": {"torch": "2.13.0"},
             "framework": {"version": "2.21.0", "git_version": "v2.21.0", "onednn": False}}
    block = environment_block(tracker, facts, "still shows in tensorflow-cpu 2.21.0")
    assert "ONEDNN_MAX_CPU_ISA=AVX2" in block.text and block.lang == "text"
    want = {"tensorflow/tensorflow": "Have you reproduced the bug with TF nightly: still shows",
            "microsoft/onnxruntime": "Execution Provider: Default CPU", "pytorch/pytorch": "PyTorch version: 2.13.0",
            "openvinotoolkit/openvino": "Device used for inference: CPU", "onnx/onnx": "Protobuf version"}.get(tracker, "")
    assert want in block.text, block.text


# --- --draft: the snippet drafted from a record runs and keeps the contract -----------------------------------


DRAFTS = [
    ({"op": "conv2d", "in_channels": 4, "out_channels": 6, "input_size": [5, 6], "kernel_size": 3, "stride": 2,
      "padding": 1, "dilation": [1, 2], "groups": 2, "bias": True},
     "y = F.conv2d(x, w, b, stride=(2, 2), dilation=(1, 2), groups=2, padding=(1, 1))"),
    ({"op": "conv_transpose1d", "in_channels": 4, "out_channels": 2, "input_size": [5], "kernel_size": 3, "stride": 2,
      "padding": 1, "output_padding": 1, "groups": 2},
     "y = F.conv_transpose1d(x, w, None, stride=(2,), padding=(1,), output_padding=(1,), groups=2, dilation=(1,))"),
]
_RUN_ALL = """
import sys
codes = []
for path in sys.argv[1:]:
    try:
        exec(compile(open(path).read(), path, "exec"), {"__name__": "__main__"})
        codes.append(0)
    except SystemExit as exc:
        codes.append(exc.code or 0)
print("CODES", codes)
"""


def test_draft_snippets_match_torch(tmp_path: Path) -> None:
    """The drafts' NumPy reference against torch on small integers (grouped, strided, dilated, padded; a
    transposed one with output padding): exact, so exit 0; with the weight negated in the framework call, the
    same drafts exit 1. One interpreter runs the four (torch imported once)."""
    from reports.repro.snippet import draft

    paths = []
    for i, (fields, translation) in enumerate(DRAFTS):
        case = make_case(id="d", file="x.yaml", **fields)
        rec = Record(case_id="d", file="x.yaml", op=case.op, params=case.params(), backend="torch",
                     backend_version="2", device="cpu", dtype="float32", status="pass", translation=translation)
        code = draft(rec, case, {"torch_cpu_capability": "DEFAULT"})
        assert 'os.environ["ATEN_CPU_CAPABILITY"] = "default"' in code and len(code.splitlines()) <= 26
        for j, source in enumerate((code, code.replace(translation, translation.replace("(x, w,", "(x, -w,")))):
            paths.append(tmp_path / f"d{i}{j}.py")
            paths[-1].write_text(source)
    proc = subprocess.run([sys.executable, "-c", _RUN_ALL, *map(str, paths)], capture_output=True, text=True,
                          timeout=300)
    assert "CODES [0, 1, 0, 1]" in proc.stdout, proc.stdout + proc.stderr


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


def test_record_title_names_what_matters() -> None:
    from reports.repro.issue import record_title

    case = make_case(id="t", op="conv_transpose2d", in_channels=4, out_channels=6, input_size=[5, 4], kernel_size=3,
                     stride=2, padding=1, output_padding=1, groups=2, bias=True, file="x.yaml")
    rec = Record(case_id="t", file="x.yaml", op=case.op, params=case.params(), backend="torch", backend_version="2.13.0",
                 device="cpu", dtype="float32", status="mismatch", bound_ratio=41.5, diagnosis="zero_fill_output_padding")
    assert record_title(rec) == ("torch 2.13.0: conv_transpose2d 4->6, input 5x4, kernel 3x3, padding (1,1)x(1,1), "
                                 "stride 2x2, output padding 1x1, groups 2, bias, float32 gives mismatch "
                                 "(zero_fill_output_padding), 41.5 x the error bound")


def test_known_issues_of_the_database_still_load() -> None:
    assert isinstance(KNOWN, KnownIssues) and len(KNOWN.entries) > 100
