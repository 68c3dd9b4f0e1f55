"""report.html, `convdiff report` (shard merge, baseline diff) and the page in a real headless Chromium."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness.commands.cli import main
from harness.execution.records import Record
from harness.judge.summary import summarize
from reports.html import build, render
from reports.merge import build_report as merge_build
from reports.merge import diff_baseline, merge_records
from reports.model import build_report

ROOT = Path(__file__).resolve().parent.parent
EVIL_TAG = "<script>alert(\"x\")</script>&'q'"
EVIL_FILE = 'a<b>&"c".yaml'
OPS = ("conv1d", "conv2d", "conv_transpose2d", "conv3d")


def _where(rank: int, bad_at: int) -> dict[str, Any]:
    names = ("N", "C", *("D", "H", "W")[3 - rank:])
    axes = {n: {"bad_indices": str(bad_at) if n == names[-1] else "0", "length": 8,
                "profile": [3.5 if (i == bad_at or n != names[-1]) else 0.2 for i in range(8)]} for n in names}
    heat = [[3.5 if j == bad_at else 0.1 for j in range(8)] for _ in range(8)]
    heat[0][0] = None  # a non-finite cell
    return {"bad": 8, "total": 512, "region": "border", "worst_index": [0] * len(names), "axes": axes,
            "heat": {"axes": list(names[-2:]), "fixed": {}, "block": [1, 1], "values": heat}}


def synthetic(n: int, fail_every: int = 10, backends: tuple[str, ...] = ("torch", "tensorflow", "paddle")) -> list[Record]:
    """n records over ops x backends; every `fail_every`-th one a mismatch (some known), a few crashes/unsupported."""
    out = []
    for i in range(n):
        op, backend = OPS[i % len(OPS)], backends[(i // len(OPS)) % len(backends)]
        rank = int(op[-2])
        status, ratio, known, block = "pass", 0.05, None, i // len(OPS)
        if block % fail_every == 0:
            status, ratio = "mismatch", 2.0 + (i % 7)
            known = "known_tf_thing" if backend == "tensorflow" else None
        elif block % (fail_every * 7) == 3:
            status, ratio = "crash", None
        elif block % (fail_every * 5) == 4:
            status, ratio = "unsupported", None
        tags = ["basic", f"t{i % 5}"] + ([EVIL_TAG] if i % 13 == 0 else [])
        params = {"op": op, "in_channels": 4, "out_channels": 6, "input_size": [9] * rank, "kernel_size": [3] * rank,
                  "batch": 1, "stride": [1] * rank, "padding": [[1, 1]] * rank, "output_padding": [0] * rank,
                  "dilation": [1] * rank, "groups": 1, "bias": i % 2 == 0, "layout": "channels_first",
                  "dtype": "float32", "data": "normal", "seed": i, "expect": "valid", "tier": "full", "tags": tags}
        out.append(Record(
            case_id=f"case_{i}[k={i % 3}]", file=EVIL_FILE if i % 17 == 0 else f"{op}.yaml", op=op, params=params,
            backend=backend, backend_version="1.0", device="cpu", dtype="float32", status=status,
            max_abs_err=None if ratio is None else ratio * 1e-6, rel_err=None, bound_ratio=ratio,
            diagnosis="flip_kernel" if status == "mismatch" and i % 3 == 0 else None, known_issue=known,
            known_status=["mismatch"] if known else [],
            message={"mismatch": "8/512 elements beyond the bound (border)", "crash": "worker died: SIGSEGV",
                     "unsupported": "no asymmetric padding"}.get(status, ""),
            translation=f"y = F.{op}(x, w, None, padding=1)" if status != "unsupported" else "",
            where=_where(rank, i % 8) if status == "mismatch" else None))
    return out


def write_shard(path: Path, records: list[Record]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.jsonl").write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    (path / "summary.json").write_text(json.dumps(summarize(records, {"date": "d", "command": f"run {path.name}",
                                                                      "targets": {f"{path.name}-cpu": {}}})))
    return path / "results.jsonl"


def expanded(html: str) -> str:
    """The page with its lazily inserted detail panels (HTML strings in an inert script block) appended."""
    m = re.search(r'<script type="text/plain" id="details-data">(.*?)</script>', html, re.S)
    assert m is not None
    return html + "\n".join(m.group(1).split("\x1e"))


# ---- model and HTML ---------------------------------------------------------------
def test_model_matrix_and_findings_worst_first() -> None:
    recs = synthetic(400)
    rep = build_report(recs, summarize(recs))
    assert rep.total == 400 and rep.passes == sum(r.status == "pass" for r in recs)
    assert sum(sum(c[s] for s in c if s != "unexpected") for c in rep.matrix.values()) == 400
    assert rep.cell_class("conv2d", "torch-cpu") == "bad"
    assert rep.cell_class("conv1d", "tensorflow-cpu") in ("known", "bad")
    members = sum(len(f.members) for f in rep.findings + rep.unsupported)
    assert members == sum(r.status != "pass" for r in recs)
    unexpected = [f for f in rep.findings if f.unexpected]
    assert rep.findings[:len(unexpected)] == unexpected  # unexpected first, then known
    worst = [f.worst for f in unexpected]
    assert worst == sorted(worst, reverse=True) and math.isinf(worst[0])  # crashes have no ratio: worst
    assert all(f.status == "unsupported" for f in rep.unsupported)


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
                      for (o, _), c in rep.matrix.items() if o == row)
        assert counted == len(mine)
    rows = {m.rec.case_id: m.row for f in rep.findings + rep.unsupported for m in f.members}
    assert rows and all(rows[r.case_id] == rep.ops[j % 3] for j, r in enumerate(recs) if r.case_id in rows)
    html = render(build(recs, summarize(recs), known_path=None))
    assert 'data-o="conv2d quantized"' in html and 'id="cell-conv2d-epilogue-torch-cpu"' in html


def test_html_has_matrix_findings_and_escapes_markup() -> None:
    recs = synthetic(300)
    raw = render(build(recs, summarize(recs, {"command": "convdiff run --tag '<b>&'"}), known_path=None))
    block = raw.split('id="details-data">')[1]
    assert block.index("</script") == block.index("</script>\n<script>\n")  # the data block ends where it should
    html = expanded(raw)
    assert 'id="cell-conv2d-torch-cpu"' in html and 'data-o="conv2d"' in html
    assert "Findings, worst first" in html and "flip_kernel" in html
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


# ---- merge and baseline -----------------------------------------------------------
def _norm(summary: dict[str, Any]) -> dict[str, Any]:
    s = {k: v for k, v in summary.items() if k not in ("fingerprint", "baseline")}
    s["findings"] = sorted([{**f, "cases": sorted(f["cases"])} for f in s["findings"]], key=str)
    s["unexpected_results"] = sorted(s["unexpected_results"], key=str)
    return s


def test_merge_of_shards_equals_unsharded(tmp_path: Path) -> None:
    recs = synthetic(600)
    shards = [write_shard(tmp_path / f"shard{i}", recs[i::3]) for i in range(3)]
    shards.append(write_shard(tmp_path / "dup", recs[:50]))  # a re-run shard: identical results again
    merged, dropped = merge_records(shards)
    assert dropped == 50 and len(merged) == 600
    assert merge_build(shards, tmp_path / "merged", ["report"]) == 1
    got = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert _norm(got) == _norm(summarize(recs))
    assert set(got["fingerprint"]["targets"]) == {"shard0-cpu", "shard1-cpu", "shard2-cpu", "dup-cpu"}
    for name in ("report.html", "junit.xml", "results.jsonl"):
        assert (tmp_path / "merged" / name).stat().st_size > 0


def test_real_shards_merge_to_the_unsharded_run(tmp_path: Path) -> None:
    """`convdiff run --shard 1/3, 2/3, 3/3`, then `convdiff report`: same summary as one unsharded run."""
    args = ["run", "cases/conv2d.yaml", "--backends", "torch,fault:nan", "--tier", "smoke"]
    if not (ROOT / "cases" / "conv2d.yaml").exists():
        pytest.skip("no cases/conv2d.yaml in this checkout")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main([*args, "--out", str(tmp_path / "all")]) == 1  # fault:nan mismatches are unexpected
        for i in (1, 2, 3):
            main([*args, "--shard", f"{i}/3", "--out", str(tmp_path / f"s{i}")])
        rc = main(["report", *(str(tmp_path / f"s{i}" / "results.jsonl") for i in (1, 2, 3)),
                   "--out", str(tmp_path / "merged")])
    finally:
        os.chdir(cwd)
    assert rc == 1
    whole = json.loads((tmp_path / "all" / "summary.json").read_text())
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert _norm(merged) == _norm(whole)
    assert (tmp_path / "merged" / "report.html").exists() and (tmp_path / "merged" / "junit.xml").exists()


def test_baseline_marks_new_still_gone(tmp_path: Path) -> None:
    recs = synthetic(400)
    old = summarize(recs)
    # tonight: one old finding gone (all conv3d torch mismatches pass), one new finding (crash on paddle conv1d)
    tonight = [Record(**{**r.__dict__, "status": "pass", "where": None})
               if (r.op == "conv3d" and r.backend == "torch" and r.status == "mismatch") else r for r in recs]
    tonight.append(Record(**{**recs[1].__dict__, "case_id": "brand_new", "status": "timeout", "bound_ratio": None}))
    diff = diff_baseline(tonight, old)
    states = {tuple(m["key"]): m["state"] for m in diff["findings"]}
    new_key = (recs[1].backend, "cpu", recs[1].op, "timeout", None, None, "out")  # ..., known_issue, output
    assert states[new_key] == "new"
    assert {g["op"] for g in diff["gone"]} == {"conv3d"} and all(g["backend"] == "torch" for g in diff["gone"])
    assert diff["new_unexpected"] == 1 and diff["new"] == 1
    assert all(s == "still present" for k, s in states.items() if k != new_key)

    base = tmp_path / "old"
    write_shard(base, recs)
    same = write_shard(tmp_path / "same", recs)
    assert main(["report", str(same), "--out", str(tmp_path / "o1"), "--baseline", str(base / "summary.json")]) == 0
    worse = write_shard(tmp_path / "worse", tonight)
    assert main(["report", str(worse), "--out", str(tmp_path / "o2"), "--baseline", str(base)]) == 1
    html = (tmp_path / "o2" / "report.html").read_text()
    assert "Gone since the baseline" in html and 'class="tag new"' in html
    # a new finding that is a known issue does not fail the night
    known_new = [*recs, Record(**{**recs[4].__dict__, "case_id": "k", "status": "rejected", "known_issue": "ki",
                                  "known_status": ["rejected"]})]
    assert main(["report", str(write_shard(tmp_path / "kn", known_new)), "--out", str(tmp_path / "o3"),
                 "--baseline", str(base)]) == 0
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_baseline_compares_like_hosts_only() -> None:
    """A target whose host facts changed is not diffed: nothing of it is "gone", its failures count as unexpected."""
    recs = synthetic(400)
    keys = {"torch-cpu": ["aaa"], "tensorflow-cpu": ["bbb"], "paddle-cpu": ["ccc"]}
    old = summarize(recs, {"target_host_keys": keys})
    tonight = [r for r in recs if r.backend != "torch" or r.status == "pass"]   # every torch finding gone...
    moved = {**keys, "torch-cpu": ["zzz"]}                                        # ...but torch ran on another host
    diff = diff_baseline(tonight, old, "", {"target_host_keys": moved})
    assert diff["host_changed"] == ["torch-cpu"] and not diff["gone"] and diff["new_unexpected"] == 0
    same = diff_baseline(tonight, old, "", {"target_host_keys": keys})
    assert same["host_changed"] == [] and {g["backend"] for g in same["gone"]} == {"torch"}
    # a still-failing target on a changed host: its unexpected findings count as with no baseline
    changed = diff_baseline(recs, old, "", {"target_host_keys": moved})
    unexpected_torch = {tuple(getattr(r, k) for k in ("backend", "device", "op", "status", "diagnosis", "known_issue"))
                        for r in recs if r.backend == "torch" and r.unexpected}
    assert changed["new_unexpected"] == len(unexpected_torch) > 0
    assert all(m["state"] == "host changed" for m in changed["findings"] if m["key"][0] == "torch")


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

    first, second = matplotlib_svg(_where(2, 3)), matplotlib_svg(_where(2, 3))
    for svg in (first, second):
        refs = set(re.findall(r'(?:url\(#|href="#)([^)"]+)', svg))
        assert refs and refs <= set(re.findall(r'id="([^"]+)"', svg))
    hashed = {i for i in re.findall(r'id="([^"]+)"', first) if not re.fullmatch(r"[\w.]+_\d+", i)}
    assert hashed and not hashed & set(re.findall(r'id="([^"]+)"', second))
    assert re.sub(r"(p|m|image)[0-9a-f]{10}-\d+", "X", first) == re.sub(r"(p|m|image)[0-9a-f]{10}-\d+", "X", second)
