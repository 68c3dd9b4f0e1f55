"""What a maintainer reading an upstream report's body would notice, held by the generator and checked on every
report in cases/upstream/:

- the others' table names each implementation so that two rows of one framework, and the reported path and
  another path of the same framework, are told apart (IREE through ONNX QLinearConv is not "IREE");
- a spec link is the documentation of the convolution the report shows (forward or transposed, the rank's
  page where there is one), and the witness case is chosen to be that convolution;
- the output block holds what the snippet and the framework say about the defect, not start-up banners;
- `convdiff upstream ID --no-run --out DIR` never replaces a report holding a run's output;
- bodies keep headroom under the 300-word limit (a regeneration's table can gain a row);
- the "fails exactly when" sentence comes only from a rule tested on fresh cases (convdiff scope's counts).

No framework runs here: units on fixtures, and the committed reports' text (2026-11-29, 2-core AMD EPYC Zen 4:
about 2 s in all).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from harness.commands.cli import main
from harness.commands.upstream import scope_rule
from harness.commands.upstream.build import build
from harness.commands.upstream.scope_rule import store, stored
from harness.commands.upstream.subjects import resolve
from harness.commands.upstream.witness import like
from harness.execution.records import Record
from harness.judge.known_issues import layered
from harness.model.build import make_case
from reports.upstream.body import body_of, ran, render
from reports.upstream.docstring import code_ops, parse_snippet
from reports.upstream.noise import without_banners
from reports.upstream.others import LABELS, PRIMARY, classify, spec_text, table

pytestmark = pytest.mark.xdist_group("test_upstream")

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "cases" / "upstream"
REPORTS = sorted(p for p in UPSTREAM.glob("*.md") if p.name != "README.md")
HEADROOM_WORDS = 280  # of the 300 a body may have: a regenerated table can gain a row or a longer message


def _rec(backend: str, status: str, version: str = "1.0", message: str = "") -> Record:
    return Record(case_id="c", file="f.yaml", op="conv3d", params={}, backend=backend, backend_version=version,
                  device="cpu", dtype="uint8", status=status, message=message, max_abs_err=0.0)


def _rows(text: str) -> list[tuple[list[str], str]]:
    """(implementation names, result) of each row of a body's others' table."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\| (.+?) \| (.+) \|$", line)
        if m and m.group(1) not in ("implementation", "---"):
            out.append((re.split(r", (?![^()]*\))", m.group(1)), m.group(2)))
    return out


# --- 1. each row names its implementation -----------------------------------------------------------------------


def test_a_variant_of_the_reported_framework_is_named() -> None:
    """IREE through QLinearConv crashes; the plain IREE path, ORT and the quantized engines of PyTorch other than
    the primary eager path give the right values: the row says which IREE, and which PyTorch."""
    records = [_rec("iree-qlinear", "crash", "3.13.0", "worker killed by SIGSEGV while running: in AtenPadOp"),
               _rec("iree", "pass", "3.13.0"), _rec("onnxruntime", "pass", "1.32.0"),
               _rec("torch-ao-fbgemm", "pass", "2.13.0"), _rec("torch-ao-qnnpack", "pass", "2.13.0")]
    reported, others = classify(records, {}, "iree-qlinear", invalid=False)
    assert table(others, reported)[2:] == [
        "| IREE (from ONNX), ONNX Runtime, PyTorch (quantized fbgemm, quantized qnnpack) | right values |"]
    # the other way round: OpenVINO reported; only IREE's QLinearConv path ran: not "IREE"
    reported, others = classify([_rec("openvino", "mismatch", "2026.4.1"), _rec("iree-qlinear", "pass", "3.13.0"),
                                 _rec("torch", "pass", "2.13.0")], {}, "openvino", invalid=False)
    assert table(others, reported)[2:] == ["| IREE (QLinearConv), PyTorch | right values |"]


def test_two_rows_of_one_framework_name_their_variants() -> None:
    records = [_rec("onnxruntime", "mismatch", "1.32.0"), _rec("tensorflow", "pass", "2.21.0"),
               _rec("tensorflow-graph", "rejected", "2.21.0", "ValueError: no"),
               _rec("tf-xla", "rejected", "2.21.0", "ValueError: other")]
    reported, others = classify(records, {}, "onnxruntime", invalid=False)
    assert table(others, reported)[2:] == ["| TensorFlow (tf.nn) | right values |",
                                           "| TensorFlow (tf.function) | refuses: ValueError: no |",
                                           "| TensorFlow (XLA) | refuses: ValueError: other |"]


def test_variant_names_read_one_way() -> None:
    """No variant holds a comma (a row lists variants with commas), and every product has one primary path."""
    assert not [v for _, v in LABELS.values() if "," in v]
    products = {p for p, _ in LABELS.values()}
    assert len(PRIMARY) == len(products) and "torch" in PRIMARY and "iree" in PRIMARY and "iree-qlinear" not in PRIMARY


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_no_two_rows_name_the_same_implementation(path: Path) -> None:
    variants = {v for _, v in LABELS.values() if v}
    seen: dict[str, str] = {}
    problems = []
    for names, result in _rows(body_of(path.read_text(encoding="utf-8"))):
        for name in names:
            if name in seen:
                problems.append(f"{name!r} in two rows ({seen[name]!r}, {result!r})")
            seen[name] = result
            listed = re.search(r"\((.*)\)$", name)
            problems += [f"{name!r}: {v!r} is no variant" for v in (listed.group(1).split(", ") if listed else [])
                         if v not in variants]
    assert not problems, f"{path.name}: " + "; ".join(problems)


# --- 2. the spec link is the documentation of the convolution shown ----------------------------------------------


def test_spec_follows_the_op() -> None:
    assert spec_text("tensorflow", "conv_transpose2d", [[1, 1], [1, 1]]) == \
        "tf.nn.conv2d_transpose (https://www.tensorflow.org/api_docs/python/tf/nn/conv2d_transpose)"
    assert spec_text("tensorflow", "conv2d", [[1, 1], [1, 1]]).startswith("tf.nn.convolution ")
    assert spec_text("paddle", "conv1d", "same").startswith("paddle.nn.functional.conv1d (")
    assert spec_text("paddle", "conv_transpose1d", "same").startswith("paddle.nn.functional.conv1d_transpose (")
    assert spec_text("jax", "conv_transpose3d", [[0, 0]] * 3).startswith("jax.lax.conv_transpose (")
    assert spec_text("torch-ao-x86", "conv_transpose2d", [[0, 0]] * 2).startswith("torch.nn.ConvTranspose2d (")
    assert spec_text("iree", "conv1d", [[0, 0]]).startswith("the ONNX Conv operator (")


def test_a_snippets_convolutions_are_read_from_its_calls() -> None:
    assert code_ops("y = F.conv1d(x, w, padding='SAME')  # not conv_transpose1d\n") == {(False, 1)}
    assert code_ops("m = torch.nn.ConvTranspose2d(2, 2, 3)\nz = paddle.nn.Conv3D(1, 1, 1)\n") == {(True, 2), (False, 3)}
    assert code_ops('node = helper.make_node("ConvTranspose", ["x", "w"], ["y"])\n') == {(True, None)}
    assert code_ops("tf.nn.conv2d_transpose(x, w, [1, 4, 4, 1], 1)\njax.lax.conv_transpose(x, w, (1,), 'SAME')\n") == \
        {(True, 2), (True, None)}
    assert code_ops("print(np.convolve(a, b))\n") == set()


def test_the_witness_is_the_convolution_the_snippet_shows() -> None:
    forward1 = make_case(id="a", op="conv1d", in_channels=1, out_channels=1, input_size=[4], kernel_size=3, file="x.yaml")
    transposed2 = make_case(id="b", op="conv_transpose2d", in_channels=1, out_channels=1, input_size=[4, 4],
                            kernel_size=3, file="x.yaml")
    assert like(forward1, {(False, 1)}) == (False, False)
    assert like(transposed2, {(False, 1)}) == (True, True)
    assert like(forward1, {(False, 2)}) == (False, True)
    assert like(transposed2, {(True, None)}) == (False, False)
    assert like(transposed2, set()) == (False, False)  # a snippet with no convolution call: no preference


def _case_op(markdown: str) -> str | None:
    m = re.search(r"^Every implementation on the same convolution \((conv(?:_transpose)?[123]d)\b", markdown, re.M)
    return m.group(1) if m else None


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_spec_links_match_the_case(path: Path) -> None:
    """Every spec link in a body is the documentation of the witness case's op (forward or transposed, its rank
    where the page is per rank), and that op is one the snippet calls where the snippet calls a convolution."""
    md = path.read_text(encoding="utf-8")
    body, op = body_of(md), _case_op(md)
    links = re.findall(r"(?:follows|values of) [^()]*\((https://[^)]+)\)", body)
    if not links or op is None:
        return
    transposed, rank = op.startswith("conv_transpose"), op[-2]
    for url in links:
        if "onnx.ai" in url or "notes_on_padding" in url:
            assert ("ConvTranspose" in url) == transposed or "notes_on_padding" in url, f"{path.name}: {url} for {op}"
            continue
        assert ("transpose" in url.lower()) == transposed, f"{path.name}: {url} for a {op}"
        digits = re.findall(r"[cC]onv(?:Transpose)?([123])[dD]", url)
        assert not digits or digits == [rank], f"{path.name}: {url} for a {op}"
    snippet = UPSTREAM / f"{path.stem}.py"
    ops = parse_snippet(snippet.read_text(encoding="utf-8")).ops if snippet.exists() else set()
    assert not ops or transposed in {t for t, _ in ops}, f"{path.name}: the table's case is a {op}, the snippet calls {ops}"


# --- 3. no start-up banners in the output block -------------------------------------------------------------------

NOISY = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795948698.792095   17614 port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results.
I0000 00:00:1795948698.834906   17614 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
/x/site-packages/paddle/utils/cpp_extension/extension_utils.py:712: UserWarning: No ccache found. Please be aware that recompiling all source files may be required.
  warnings.warn(warning_message)
tensorflow 2.21.0
W0000 00:00:1795948703.164020   17614 op_kernel.cc:1858] OP_REQUIRES failed at mkl_conv_ops.h:455 : INVALID_ARGUMENT: Stride must be > 0, but got 0
/x/torch/_dynamo/utils.py:4231: UserWarning: Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy
  return node.target(*args, **kwargs)
/usr/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec)`.
  return cls.__new__(cls, *args)
\x1b[0;33m2026-11-29 08:39:59 [WARNING]\tStatic PaddlePaddle model will be deleted, if you want to keep it, please set env variable.\x1b[0m
eager: InvalidArgumentError: Stride must be > 0, but got 0 [Op:Conv2DBackpropInput]
"""


def test_banners_are_dropped_and_the_defects_words_kept() -> None:
    assert without_banners(NOISY).splitlines() == [
        "tensorflow 2.21.0",
        "W0000 00:00:1795948703.164020   17614 op_kernel.cc:1858] OP_REQUIRES failed at mkl_conv_ops.h:455 : "
        "INVALID_ARGUMENT: Stride must be > 0, but got 0",
        "/x/torch/_dynamo/utils.py:4231: UserWarning: Using padding='same' with even kernel lengths and odd dilation "
        "may require a zero-padded copy",
        "  return node.target(*args, **kwargs)",
        "eager: InvalidArgumentError: Stride must be > 0, but got 0 [Op:Conv2DBackpropInput]"]


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_output_blocks_hold_no_banner(path: Path) -> None:
    body = body_of(path.read_text(encoding="utf-8"))
    block = re.search(r"^Output:\n\n(`{3,})text\n(.*?)^\1$", body, re.M | re.S)
    text = block.group(2) if block else ""
    assert without_banners(text) == text, f"{path.name}: a start-up banner in the output block"


# --- 4. --no-run keeps a report that holds a run ------------------------------------------------------------------

_SNIPPET = '''"""A fixture's title

Kind: wrong-value
Ask: A fix.

What happens: the fixture exits 1.

Expected: nothing; it is a fixture.

Mechanism: not located (a fixture).
"""
import sys
sys.exit(1)
'''


def _fixture(tmp_path: Path) -> Path:
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "fx.py").write_text(_SNIPPET)
    known = tmp_path / "known_issues.yaml"
    known.write_text(textwrap.dedent("""\
        issues:
          - {id: fx, backend: torch, cases: {op: conv2d}, status: mismatch, reason: r, link: none found,
             tracker: pytorch/pytorch, kind: wrong-value}
        """))
    return known


def test_no_run_never_replaces_a_report_that_ran(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    known, out = _fixture(tmp_path), tmp_path / "out"
    out.mkdir()
    md = out / "fx.md"
    md.write_text("# A fixture's title\n\nOutput:\n\n```text\nshown\n[exit status 1]\n```\n")
    assert ran(md.read_text()) and not ran("# t\n\n```text\n[not run: --no-run]\n```\n")
    before = md.read_text()
    assert main(["upstream", "fx", "--known-issues", str(known), "--out", str(out), "--no-run"]) == 1
    assert md.read_text() == before and "kept " in capsys.readouterr().err
    md.write_text("# A fixture's title\n\nOutput:\n\n```text\n[not run: --no-run]\n```\n")  # nothing to lose
    assert main(["upstream", "fx", "--known-issues", str(known), "--out", str(out), "--no-run"]) == 0
    assert "[not run: --no-run]" in md.read_text() and "A fix." in md.read_text()
    assert main(["upstream", "fx", "--known-issues", str(known), "--no-run"]) == 0  # stdout: always
    assert "[not run: --no-run]" in capsys.readouterr().out


# --- 5. headroom under the word limit -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_bodies_keep_headroom(path: Path) -> None:
    body = re.sub(r"```.*?```", "", body_of(path.read_text(encoding="utf-8")), flags=re.S)
    assert len(body.split()) <= HEADROOM_WORDS, f"{path.name}: {len(body.split())} words of prose"


# --- 6. the "fails exactly when" sentence: a tested rule, or nothing ----------------------------------------------


def test_only_a_confirmed_rule_is_said(tmp_path: Path) -> None:
    known = layered([str(_fixture(tmp_path))], [])
    root = resolve("fx", known)
    assert stored(root) is None and not build(root, run=False, timeout=1.0).scope  # no rule tested: nothing said
    rule = scope_rule.TestedRule("fx", "torch", "any(d > 1 and pb > 0 for d, pb in zip(dilation, pad_before))",
                      "dilation > 1 and pad before > 0 on one axis", 14, 0, 0, 13, confirmed=False, date="2026-11-29")
    store(root, rule)
    assert stored(root) == rule and rule.sentence() == "" and not build(root, run=False, timeout=1.0).scope
    store(root, scope_rule.TestedRule(**{**rule.__dict__, "confirmed": True}))
    md = render(build(root, run=False, timeout=1.0))
    said = ("It fails exactly when dilation > 1 and pad before > 0 on one axis: of fresh cases, 14 of 14 inside that "
            "rule failed, and 13 of 13 just outside it passed (torch, tested 2026-11-29).")
    assert said in md.split("<details", 1)[1]
    (tmp_path / "upstream" / "scope" / "fx.json").write_text("{not json")
    assert stored(root) is None


@pytest.mark.nightly("infers and tests a rule on a planted bug for 90 s (its workers, rounds of fresh cases): the "
                     "sentence's rendering is held above without a run")
def test_scope_sentence_from_a_planted_bug(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A planted bug whose scope is known (padding_scaled_by_dilation: the pad before times the dilation, so wrong
    exactly when an axis has dilation > 1 and a pad before; the entry takes the forward convs, whose output it
    lengthens): `--scope` finds that rule on fresh cases and the report's details say it with its counts."""
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "fx.py").write_text(_SNIPPET)
    known = tmp_path / "known_issues.yaml"
    known.write_text(textwrap.dedent("""\
        issues:
          - {id: fx, backend: "mutant:padding_scaled_by_dilation", cases: {op: "conv?d",
             when: "any(d > 1 and pb > 0 for d, pb in zip(dilation, pad_before))"}, status: [mismatch, shape_mismatch],
             reason: r,
             link: none found, tracker: pytorch/pytorch, kind: wrong-value}
        """))
    out = tmp_path / "out"
    assert main(["upstream", "fx", "--known-issues", str(known), "--out", str(out), "--scope", "90",
                 "--others", "torch"]) == 0
    rule = stored(resolve("fx", layered([str(known)], [])))
    assert rule is not None and rule.confirmed and "dilation" in rule.words and "pad before" in rule.words, rule
    assert rule.fails_inside >= 12 and rule.passes_inside == 0 and rule.fails_outside == 0, rule
    assert f"It fails exactly when {rule.words}" in (out / "fx.md").read_text().split("<details", 1)[1]


def test_a_rule_is_tried_where_it_and_the_selector_disagree(tmp_path: Path) -> None:
    """A rule learned from per-channel draws only ("a transposed conv") and an entry on per-channel transposed
    convs disagree on a per-tensor transposed case: that corpus case is run before the rule is kept."""
    from harness.judge.rules import Rule
    from harness.model.features import FeatureTable

    (tmp_path / "known_issues.yaml").write_text(textwrap.dedent("""\
        issues:
          - {id: pc, backend: torch-ao-fbgemm, cases: {op: "conv_transpose*", quant: {per_channel: true}},
             status: rejected, reason: r, link: none found}
        """))
    entry = layered([str(tmp_path / "known_issues.yaml")], []).entries[0]
    fields = {"in_channels": 2, "out_channels": 2, "input_size": [3], "kernel_size": 2, "dtype": "uint8"}
    per_channel = make_case(id="pc", op="conv_transpose1d", quant={"per_channel": True}, **fields)
    per_tensor = make_case(id="pt", op="conv_transpose1d", quant={"per_channel": False}, **fields)
    forward = make_case(id="fw", op="conv1d", quant={"per_channel": False}, **fields)
    table = FeatureTable.build([per_channel.params()])
    transposed = Rule(((next(a for a in table.atoms if a.text == "transpose"),),))
    assert [c.id for c in scope_rule.disputed(entry, "torch-ao-fbgemm", transposed, [per_channel, per_tensor, forward])] == ["pt"]
