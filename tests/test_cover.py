"""The smoke cover and `make test`'s smoke items on the backends that build a model per case (issue 26)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.commands.smoke_select import FULL_TESTS_ENV, split, wanted
from harness.model.build import make_case
from harness.model.cover import cover, features, shape_features, uncovered
from harness.model.loader import load_cases
from tests.helpers import run_pytest

BASE = {"op": "conv2d", "in_channels": 4, "out_channels": 4, "input_size": 6, "kernel_size": 3, "file": "f.yaml"}


def test_features_name_each_axis_value():
    case = make_case(id="t", **{**BASE, "op": "conv_transpose1d", "input_size": 5, "stride": 2, "padding": [[1, 0]],
                                "output_padding": 1, "groups": 4, "bias": True, "tags": ["seed"]})
    assert {"op=conv_transpose1d", "padding=asymmetric", "stride>1=True", "dilation>1=False", "groups=depthwise",
            "bias=True", "output_padding=True", "batch>1=False", "epilogue=False", "file=f.yaml",
            "tag=seed"} <= features(case)
    assert "groups=grouped" in features(make_case(id="g", **{**BASE, "groups": 2}))
    assert "padding=same" in features(make_case(id="s", **{**BASE, "padding": "same"}))
    assert "padding=symmetric" in features(make_case(id="p", **{**BASE, "padding": 1}))


def test_cover_takes_the_case_adding_most_and_skips_what_adds_nothing():
    plain = make_case(id="plain", **BASE)
    twin = make_case(id="twin", **BASE)  # the same features as plain: never needed once plain is in
    strided = make_case(id="strided", **{**BASE, "stride": 2})
    rich = make_case(id="rich", **{**BASE, "stride": 2, "bias": True, "padding": 1})
    # each case shows one value per axis, so the first pick is a tie, which goes to the earlier case: plain;
    # then rich adds 3 values (stride>1, bias, symmetric padding), strided 1, twin none: rich, and all are shown
    assert [c.id for c in cover([plain, twin, strided, rich])] == ["plain", "rich"]
    assert [c.id for c in cover([twin, plain, rich])] == ["twin", "rich"]
    # after strided: rich adds bias and symmetric padding (2), plain only stride 1 (1): rich, then plain
    assert [c.id for c in cover([strided, plain, rich])] == ["strided", "rich", "plain"]
    assert cover([]) == []


def test_the_smoke_tier_cover_shows_every_feature_in_fewer_cases():
    smoke = [c for c in load_cases(["cases"]) if c.tier == "smoke"]
    chosen = cover(smoke)
    assert not uncovered(smoke, chosen)
    assert len(chosen) < len(smoke) * 0.6, (len(chosen), len(smoke))
    assert cover(smoke) == chosen  # deterministic


def test_shape_features_are_what_reaches_a_translation():
    """Hand-derived: the file and the tags are gone; the forms of the call are there."""
    case = make_case(id="t", **{**BASE, "tags": ["seed"], "padding": "same", "same_convention": "torch"})
    shape = shape_features(case)
    assert not any(f.startswith(("file=", "tag=")) for f in shape)
    assert {"op=conv2d", "padding=same", "same_convention=torch", "unbatched=False", "mixed_dtypes=False",
            "weight_shape_given=False"} <= shape
    assert "unbatched=True" in shape_features(make_case(id="u", **{**BASE, "unbatched": True}))
    assert "mixed_dtypes=True" in shape_features(make_case(id="m", **{**BASE, "weight_dtype": "float64",
                                                                      "expect": "invalid"}))
    # the same shape in another file, with another tag, adds nothing to the shape cover
    other = make_case(id="o", **{**BASE, "file": "g.yaml", "tags": ["other"]})
    plain = make_case(id="plain", **BASE)
    assert [c.id for c in cover([plain, other], by=shape_features)] == ["plain"]
    assert [c.id for c in cover([plain, other])] == ["o", "plain"]  # o's tag, then plain's file


def test_the_shape_cover_of_the_smoke_tier_is_smaller_and_shows_every_shape_feature():
    smoke = [c for c in load_cases(["cases"]) if c.tier == "smoke"]
    chosen = cover(smoke, by=shape_features)
    assert not uncovered(smoke, chosen, by=shape_features)
    assert len(chosen) < len(cover(smoke))


def _item(case, backend, known=()):
    return SimpleNamespace(case=case, backend=backend, known=[SimpleNamespace(id=k) for k in known], forward_known=[])


def test_split_keeps_every_eager_item_the_cover_and_a_witness_per_known_issue():
    plain, twin = make_case(id="plain", **BASE), make_case(id="twin", **BASE)
    known_a, known_b = make_case(id="known_a", **BASE), make_case(id="known_b", **BASE)  # plain's features again
    pinned = {"known_a": ["entry"], "known_b": ["entry", "other"]}
    items = [_item(c, b, pinned.get(c.id, ()) if b == "tvm" else ())
             for c in (plain, twin, known_a, known_b) for b in ("torch", "tvm")] + [SimpleNamespace(name="test_x")]
    kept, dropped = split(items, lambda backend: backend == "tvm")
    # twin adds no feature and names no known issue; known_a is entry's first case; known_b is other's
    assert [(i.case.id, i.backend) for i in dropped] == [("twin", "tvm")]
    assert len(kept) == len(items) - 1 and items[-1] in kept
    items.insert(7, _item(make_case(id="known_c", **BASE), "tvm", ["entry"]))  # entry's witness is known_a
    assert [(i.case.id, i.backend) for i in split(items, lambda backend: backend == "tvm")[1]] == [
        ("twin", "tvm"), ("known_c", "tvm")]


def test_wanted_only_for_the_smoke_tier_by_default(monkeypatch):
    monkeypatch.delenv(FULL_TESTS_ENV, raising=False)
    assert wanted("cover", "smoke") and not wanted("all", "smoke") and not wanted("cover", "full")
    monkeypatch.setenv(FULL_TESTS_ENV, "1")
    assert not wanted("cover", "smoke")


CASES = """\
defaults: {op: conv2d, in_channels: 2, out_channels: 2, input_size: 5, kernel_size: 3, tier: smoke}
cases:
  - id: first
  - id: same_again
  - id: strided
    stride: 2
"""


@pytest.mark.parametrize("extra,env,tvm_runs", [((), None, ["first", "strided"]),
                                                (("--convdiff-compiled-smoke", "all"), None, ["first", "same_again", "strided"]),
                                                ((), "1", ["first", "same_again", "strided"])])
def test_make_test_deselects_only_redundant_items_of_building_backends(pytester, monkeypatch, extra, env, tvm_runs):
    monkeypatch.delenv(FULL_TESTS_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(FULL_TESTS_ENV, env)
    pytester.mkdir("cases")
    pytester.path.joinpath("cases", "conv2d.yaml").write_text(CASES)
    pytester.makeini("[pytest]\nconvdiff_cases = cases\n")
    result = run_pytest(pytester, "cases", "--convdiff-backends", "torch,tvm", "--convdiff-tier", "smoke", "--collect-only", "-q", *extra)
    ids = [ln.split("::")[1] for ln in result.stdout.lines if "::" in ln]
    assert sorted(i.split("[")[0] for i in ids if i.endswith("[torch-cpu]")) == ["first", "same_again", "strided"]
    assert sorted(i.split("[")[0] for i in ids if i.endswith("[tvm-cpu]")) == tvm_runs
    assert ("1 deselected" in result.stdout.str()) == (len(tvm_runs) == 2)
