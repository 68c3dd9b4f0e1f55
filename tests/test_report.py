"""report.html's model and page; shard merge and baseline diff are tests/test_report_merge.py, the page in a real
browser tests/test_report_browser.py."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from harness.judge.summary import summarize
from reports.html import build, render
from reports.model import build_report
from reports.payload import unpack
from tests.report_records import synthetic, varied, where_of


def page_data(html: str) -> tuple[dict[str, Any], list[str]]:
    """The page's two data blocks decoded: the result index and every detail panel, in page order."""
    idx = re.search(r'<script type="text/plain" id="cd-index">(.*?)</script>', html, re.S)
    det = re.search(r'<script type="text/plain" id="cd-details">(.*?)</script>', html, re.S)
    assert idx is not None and det is not None
    bodies = [b for chunk in det.group(1).split() for b in unpack(chunk)]
    return unpack(idx.group(1)), bodies


def expanded(html: str) -> str:
    """The page with its lazily inserted detail panels (deflated JSON in an inert script block) appended."""
    return html + "\n".join(page_data(html)[1])


# ---- model and HTML ---------------------------------------------------------------
def test_model_matrix_and_findings_in_class_order() -> None:
    recs = synthetic(400)
    rep = build_report(recs, summarize(recs))
    assert rep.total == 400 and rep.passes == sum(r.status == "pass" for r in recs)
    assert sum(sum(c[s] for s in c if s != "unexpected") for (_, col), c in rep.matrix.items() if col[0] != "@") == 400
    assert sum(sum(c[s] for s in c if s != "unexpected") for (_, col), c in rep.matrix.items() if col[0] == "@") == 400
    assert rep.cell_class("conv2d", "torch-cpu") == "bad"
    assert rep.cell_class("conv1d", "tensorflow-cpu") in ("known", "bad")
    members = sum(len(f.members) for f in rep.findings + rep.unsupported)
    assert members == sum(r.status != "pass" for r in recs)
    classes = [f.cls for f in rep.findings]
    assert classes == sorted(classes) and classes[0] == 0  # mismatches before the crashes
    wrong = [f for f in rep.findings if f.status == "mismatch"]
    unexpected = [f for f in wrong if f.unexpected]
    assert wrong[:len(unexpected)] == unexpected  # unexpected first, then known, inside a class
    worst = [f.worst for f in unexpected]
    assert worst == sorted(worst, reverse=True)
    assert all(f.status == "unsupported" for f in rep.unsupported)
    keys = [m.key for f in rep.findings + rep.unsupported for m in f.members]
    assert keys == list(range(members))  # page order


def test_findings_lead_with_silent_wrong_values_largest_first() -> None:
    """A documented refusal, a crash and a wrong shape have no error/bound: none of them outranks a measured
    wrong value; a non-finite output counts as the largest; the 5.57e15 x bound mismatch comes next."""
    recs = varied()
    rep = build_report(recs, summarize(recs))
    order = [(f.status, f.backend) for f in rep.findings]
    statuses = [s for s, _ in order]
    wrong = ("mismatch", "shape_mismatch", "accepted_invalid")
    assert all(s in wrong for s in statuses[:5]) and not set(statuses[5:]) & set(wrong)
    # the unexpected ones first (they fail the run): the NaN output, the largest, then the 1.7 x bound one
    assert order[0] == ("mismatch", "paddle") and math.isinf(rep.findings[0].worst)
    assert order[1] == ("mismatch", "torch") and rep.findings[1].worst == 1.7
    assert order[2] == ("mismatch", "tf-xla") and rep.findings[2].worst == 5.57e15
    assert rep.findings[2].worst_text == "5.57e15 x bound"
    assert {statuses[3], statuses[4]} == {"shape_mismatch", "accepted_invalid"}
    assert statuses[5:] == ["crash", "timeout", "error", "rejected"]  # unexpected before known in each class
    assert [m.rec.bound_ratio for m in rep.findings[2].members] == sorted(
        (r.bound_ratio for r in recs if r.backend == "tf-xla" and r.status == "mismatch"), reverse=True)
    assert rep.worst_wrong is not None and rep.worst_wrong.rec.case_id == "v130"  # the largest: non-finite
    # the overview counts, from the records
    ov = rep.overview
    wrong_recs = [r for r in recs if r.status in wrong]
    assert (ov.wrong.total, ov.wrong.unexpected) == (len(wrong_recs), sum(r.unexpected for r in wrong_recs))
    assert ov.wrong.by_status == {s: sum(r.status == s for r in recs) for s in wrong if any(r.status == s for r in recs)}
    assert (ov.crashes.total, ov.crashes.unexpected) == (2, 1) and (ov.refusals.total, ov.refusals.known) == (8, 8)
    assert ov.unexpected_total == sum(r.unexpected for r in recs) and ov.failed
    assert [m.rec.case_id for m in rep.unexpected_results] == ["v130", "v132", "v133", "v150"]


def test_targets_group_by_framework_family() -> None:
    from reports.families import family, group_targets

    assert [family(b) for b in ("torch-inductor", "torch-ao-qnnpack", "tf-xla", "tensorflow-keras", "litert-ref",
                                "paddle-inference", "jax-jit", "tvm-onnx-import", "openvino", "torch-onnx-ort",
                                "mutant:flip_kernel", "fault:nan")] == \
        ["torch", "torch", "tensorflow", "tensorflow", "litert", "paddle", "jax", "tvm", "onnx", "onnx",
         "testing", "testing"]
    assert family("tf-someday") == "tensorflow" and family("newfw-eager") == "newfw"  # not registered: the prefix
    groups = dict(group_targets(["torch-cpu", "tf-xla-cpu", "torch-inductor-cpu", "openvino-cpu", "torch-cuda"]))
    assert groups == {"torch": ["torch-cpu", "torch-cuda", "torch-inductor-cpu"], "tensorflow": ["tf-xla-cpu"],
                      "onnx": ["openvino-cpu"]}
    recs = varied()
    rep = build_report(recs, summarize(recs))
    assert [f for f, _ in rep.families] == ["torch", "tensorflow", "paddle"]
    fam_total = sum(n for (_, col), c in rep.matrix.items() if col == "@torch" for s, n in c.items() if s != "unexpected")
    assert fam_total == sum(r.backend.startswith("torch") for r in recs)


def test_page_data_holds_every_listed_result_in_page_order() -> None:
    recs = varied()
    html = render(build(recs, summarize(recs), known_path=None))
    idx, bodies = page_data(html)
    rep = build_report(recs, summarize(recs))
    listed = [m.rec for f in rep.findings + rep.unsupported for m in f.members]
    assert len(idx["r"]) == len(bodies) == len(listed) == sum(r.status != "pass" for r in recs)
    s = idx["s"]
    assert [(s[r[0]], s[r[1]]) for r in idx["r"]] == [(r.file, r.case_id) for r in listed]
    assert [bool(r[4] & 1) for r in idx["r"]] == [r.unexpected for r in listed]
    assert [g[3] for g in idx["g"]] == [f.members[0].key for f in rep.findings + rep.unsupported]
    for body, r in zip(bodies, listed):
        assert f"id: {r.case_id}" in body
    # the findings' headers are in the page, in index order, the first a wrong value; the unsupported groups'
    # (built by the script when asked for) are in the index only, with their reason
    heads = re.findall(r'<details class="grp c(\d)[^"]*" id="g(\d+)"><summary><span class="st st-(\w+)"', html)
    assert [int(g) for _, g, _ in heads] == list(range(len(rep.findings)))
    assert [st for _, _, st in heads] == [s[g[1]] for g in idx["g"][:len(heads)]] and heads[0][2] == "mismatch"
    assert [(s[g[0]], s[g[11]]) for g in idx["g"][len(heads):]] == [("torch-ao-qnnpack-cpu", "no float input")]


def test_first_screen_shows_wrong_values_and_broken_targets_before_the_environment() -> None:
    recs = varied()
    summary = summarize(recs, {"date": "2026-11-28", "command": "convdiff run", "host": {"cpu_model": "X"}},
                        broken={"tvm-cpu": "setup() raised: no llvm"}, named=["jax"])
    html = render(build(recs, summary, known_path=None))
    head = html[:html.index('<details id="env">')]
    wrong = sum(r.status in ("mismatch", "shape_mismatch", "accepted_invalid") for r in recs)
    card = re.search(r'<span>wrong values</span><b class="big">(\d+)</b>\s*<small>(\d+) known · <b>(\d+)</b> unexpected',
                     head)
    assert card is not None and [int(x) for x in card.groups()] == [wrong, wrong - 2, 2]
    assert 'class="verdict fail"' in head and "tvm-cpu" in head and "no llvm" in head
    assert re.search(r'id="missing".*<b class="mono">jax</b>', head, re.S)
    assert '<table class="fp">' not in head and html.index('<details id="env">') < html.index('id="matrix"')
    for case in ("v132", "v130", "v133", "v150"):  # each unexpected result named, with a link
        assert re.search(rf'<a href="#r=\d+" class="mono">conv2d.yaml::{case}</a>', head)
def test_epilogue_and_quantized_results_get_rows_of_their_own() -> None:
    """conv2d, conv2d + epilogue and conv2d quantized are three rows; each cell counts its own results,
    and a result's panel carries its row (the cell click filters on it)."""
    import dataclasses

    recs = [r for r in synthetic(60) if r.op == "conv2d"]
    kinds = [{}, {"epilogue": ["scale", "relu"]}, {"dtype": "int8", "quant": {"range": "full"}}]
    recs = [dataclasses.replace(r, params={**r.params, **kinds[i % 3]}) for i, r in enumerate(recs)]
    rep = build_report(recs, summarize(recs))
    assert rep.ops == ["conv2d", "conv2d + epilogue", "conv2d quantized"]
    for i, row in enumerate(rep.ops):
        mine = [r for j, r in enumerate(recs) if j % 3 == i]
        counted = sum(sum(n for s, n in c.items() if s != "unexpected")
                      for (o, col), c in rep.matrix.items() if o == row and col[0] != "@")
        assert counted == len(mine)
    rows = {m.rec.case_id: m.row for f in rep.findings + rep.unsupported for m in f.members}
    assert rows and all(rows[r.case_id] == rep.ops[j % 3] for j, r in enumerate(recs) if r.case_id in rows)
    html = render(build(recs, summarize(recs), known_path=None))
    assert "<tr><th>conv2d quantized</th>" in html and "<tr><th>conv2d + epilogue</th>" in html
    idx, _ = page_data(html)
    assert [idx["s"][r[5]] for r in idx["r"]] == [m.row for f in rep.findings + rep.unsupported for m in f.members]


def test_html_has_matrix_findings_and_escapes_markup() -> None:
    recs = synthetic(300)
    raw = render(build(recs, summarize(recs, {"command": "convdiff run --tag '<b>&'"}), known_path=None))
    for block in ('id="cd-index">', 'id="cd-details">'):  # base64: nothing in a data block can end it early
        data = raw.split(block)[1].split("</script>")[0]
        assert re.fullmatch(r"[A-Za-z0-9+/=\n]*", data)
    html = expanded(raw)
    assert '<th class="col" data-c="torch-cpu">torch-cpu</th>' in html and "<tr><th>conv2d</th>" in html
    assert "Findings: wrong values first" in html and "flip_kernel" in html
    assert "<svg" in html and "log10 err/bound" in html  # matplotlib plot for the worst members
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;q&#39;" in html
    assert "a&lt;b&gt;&amp;&#34;c&#34;.yaml" in html
    assert "<script>alert" not in html and 'a<b>&"c"' not in html
    assert "convdiff run --tag &#39;&lt;b&gt;&amp;&#39;" in html
    # nothing to fetch: no stylesheets, scripts, images or fonts by URL (xmlns names are not fetched)
    assert not re.findall(r'(?:src|href)\s*=\s*"(?!#|data:)[^"]*"|url\((?!#)|<link|@import', html)


def test_known_issue_links_and_fixed_upstream(tmp_path: Path) -> None:
    recs = synthetic(120)
    recs[0].known_issue, recs[0].known_status = "ki_one", ["mismatch"]
    recs[5].known_issue, recs[5].known_status = "ki_two", ["mismatch"]  # a pass: fixed upstream?
    known = tmp_path / "known_issues.yaml"
    known.write_text("issues:\n"
                     "  - {id: ki_one, backend: torch, status: mismatch, reason: 'r <1>', link: 'see https://x.org/i/1'}\n"
                     "  - {id: ki_two, backend: torch, status: mismatch, reason: r2, link: 'javascript:alert(1)'}\n")
    html = render(build(recs, summarize(recs), known_path=known))
    assert '<a href="https://x.org/i/1" rel="noopener noreferrer">https://x.org/i/1</a>' in html and "r &lt;1&gt;" in html
    assert 'href="javascript' not in html and "javascript:alert(1)" in html
    assert "fixed upstream?" in html and f"{recs[5].file}::{recs[5].case_id}" in html


def test_a_run_without_failures_or_results_renders() -> None:
    passing = [r for r in synthetic(100) if r.status == "pass"]
    for recs in ([], passing):
        html = render(build(recs, summarize(recs), known_path=None))
        assert 'class="verdict ok">PASS' in html and "No wrong values, crashes, refusals or errors." in html
        idx, bodies = page_data(html)
        assert idx["r"] == [] and bodies == []


def test_page_size_per_result_stays_small() -> None:
    """Passing results cost a matrix count; listed ones a row of the deflated index and a deflated panel:
    at most 300 bytes a result overall, as on make run's corpus."""
    recs = synthetic(2000)
    html = render(build(recs, summarize(recs), known_path=None))
    assert len(html.encode()) / len(recs) <= 300


def test_finding_groups_show_the_known_issue_upstream_state_and_file(tmp_path: Path) -> None:
    """Each group a known issue explains names the entry, what upstream knows (none found / reported with
    the link / fixed in a release), the file the entry comes from, and the upstream reproducer beside it."""
    known = tmp_path / "mine" / "known_issues.yaml"
    (known.parent / "upstream").mkdir(parents=True)
    (known.parent / "upstream" / "xla_conv3d_huge.py").write_text("print('repro')\n")
    known.write_text(
        "issues:\n"
        "  - {id: xla_conv3d_huge, backend: tf-xla, status: mismatch, reason: r1, link: 'https://x.org/i/7'}\n"
        "  - {id: qnnpack_int8_refusal, backend: torch-ao-qnnpack, status: rejected, reason: r2,\n"
        "     link: 'none found (searched the tracker)'}\n"
        "  - {id: paddle_shape, backend: paddle, status: shape_mismatch, reason: r3, link: 'https://x.org/i/9',\n"
        "     fixed_in: paddle 3.9}\n")
    recs = varied()
    for r in recs:
        if r.known_issue:
            r.known_issue_file = str(known)
    summary = summarize(recs)
    summary["known_issues"] = {k: [f"reason of {k}", link, str(known)] for k, link in (
        ("xla_conv3d_huge", "https://x.org/i/7"), ("qnnpack_int8_refusal", "none found (searched the tracker)"),
        ("paddle_shape", "https://x.org/i/9"))}
    html = render(build(recs, summary, known_path=None))
    head = {g: html[html.index(f'id="g{g}"'):].split("</summary>")[0] for g in range(30) if f'id="g{g}"' in html}
    by_known = {k: next(h for h in head.values() if f'href="#known-{k}"' in h)
                for k in ("xla_conv3d_huge", "qnnpack_int8_refusal", "paddle_shape")}
    shown_file = str(known)
    assert "upstream: <b>reported</b>" in by_known["xla_conv3d_huge"]
    assert '<a href="https://x.org/i/7" rel="noopener noreferrer">' in by_known["xla_conv3d_huge"]
    assert f"from <span class=\"mono\">{shown_file}</span>" in by_known["xla_conv3d_huge"]
    assert "upstream/xla_conv3d_huge.py" in by_known["xla_conv3d_huge"]
    assert "<code>convdiff upstream xla_conv3d_huge</code>" in by_known["xla_conv3d_huge"]
    assert "upstream: <b>none found</b>" in by_known["qnnpack_int8_refusal"]
    assert "upstream: <b>fixed in paddle 3.9</b>" in by_known["paddle_shape"]
    assert "convdiff upstream" not in by_known["paddle_shape"]  # no reproducer or report beside its file


def test_html_from_real_records(tmp_path: Path) -> None:
    """torch (pass), mutant:flip_kernel and fault:nan (mismatches) through the real workers, then write_reports."""
    from harness.model.build import make_case
    from reports import write_reports
    from tests.helpers import run_on

    cases = [make_case(id="plain", op="conv2d", in_channels=2, out_channels=3, input_size=[6, 7], kernel_size=3,
                       tags=["basic"], file="conv2d.yaml"),
             make_case(id="tr", op="conv_transpose1d", in_channels=2, out_channels=2, input_size=9, kernel_size=3,
                       stride=2, output_padding=1, file="conv_transpose1d.yaml")]
    recs = run_on(cases, ["torch", "mutant:flip_kernel", "fault:nan"])
    summary = summarize(recs)
    paths = write_reports(tmp_path, recs, summary)
    html = expanded((tmp_path / "report.html").read_text())
    assert tmp_path / "report.html" in paths
    assert "fault:nan-cpu" in html and "torch-cpu" in html and "non-finite output" in html
    assert "w = w.flip([2])  # mutant:flip_kernel\ny = F.conv_transpose1d(x, w, None" in html  # the translation
    assert "log10 err/bound" in html  # matplotlib profile of the worst member
    assert "def run_framework" in html  # the standalone script
    assert "convdiff repro conv2d.yaml::plain --backend fault:nan --device cpu" in html


def test_case_yaml_has_no_anchors() -> None:
    """Repeated per-dimension values print as plain YAML a user can paste into a case file."""
    from reports.model import case_yaml

    pair = [1, 1]
    rec = synthetic(1)[0]
    rec.params = {**rec.params, "padding": [pair, pair], "stride": pair, "tags": ["plain"]}
    text = case_yaml(rec)
    assert "&id" not in text and "*id" not in text and "- [1, 1]" in text


def test_a_figure_drawn_twice_shares_no_id_with_its_copy() -> None:
    """matplotlib figures are drawn once per distinct `where` (reports/plots.py); two copies inlined in one
    page must still resolve every reference to their own clip paths, markers and images."""
    import re

    from reports.plots import matplotlib_svg

    first, second = matplotlib_svg(where_of(2, 3)), matplotlib_svg(where_of(2, 3))
    for svg in (first, second):
        refs = set(re.findall(r'(?:url\(#|href="#)([^)"]+)', svg))
        assert refs and refs <= set(re.findall(r'id="([^"]+)"', svg))
    hashed = {i for i in re.findall(r'id="([^"]+)"', first) if not re.fullmatch(r"[\w.]+_\d+", i)}
    assert hashed and not hashed & set(re.findall(r'id="([^"]+)"', second))
    assert re.sub(r"(p|m|image)[0-9a-f]{10}-\d+", "X", first) == re.sub(r"(p|m|image)[0-9a-f]{10}-\d+", "X", second)
