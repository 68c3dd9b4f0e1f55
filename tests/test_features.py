"""The derived names `when` sees and the boolean features scope inference builds rules from: values derived
by hand on small cases, and every feature's own text, evaluated as a selector, agreeing with its matrix."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness.commands.fuzz.gen import generate
from harness.judge.known_issues import DERIVED_NAMES, KnownIssue
from harness.model.features import FeatureTable, derived_names, selector_names
from harness.model.predicate import compile_predicate, evaluate

from .helpers import make_case


def test_pads_reach_and_group_counts_derived_by_hand():
    # SAME, stride 2, kernel 4, input 7: total = (ceil(7/2)-1)*2 + 4 - 7 = 3 -> 1 before, 2 after
    c = make_case(id="a", op="conv2d", in_channels=6, out_channels=4, groups=2, input_size=[7, 5],
                  kernel_size=[4, 1], stride=[2, 1], dilation=[1, 3], padding="same")
    n = derived_names(c.params())
    assert n["pad_before"] == (1, 0) and n["pad_after"] == (2, 0) and n["pad_total"] == (3, 0)
    assert n["reach"] == (3, 0) and n["in_per_group"] == 3 and n["out_per_group"] == 2
    assert n["out_size"] == (4, 5) and n["acc_len"] == 3 * 4 * 1 and n["rank"] == 2 and not n["transpose"]
    # a transposed conv's pads are its crop; output_padding stays the case's own
    t = make_case(id="t", op="conv_transpose1d", in_channels=2, out_channels=2, input_size=4, kernel_size=3,
                  stride=2, padding=[[2, 1]], output_padding=1)
    nt = derived_names(t.params())
    assert nt["pad_before"] == (2,) and nt["pad_after"] == (1,) and nt["out_size"] == ((4 - 1) * 2 + 3 + 1 - 3,)


def test_padding_only_axes_derived_by_hand():
    # depth: input 1, kernel 2 dilated by 3, pads (2, 2): outputs 0 and 1 read rows -2, 1 and -1, 2 (padding only);
    # width: input 4, kernel 1, no pads: every output reads the input
    c = make_case(id="p", op="conv2d", in_channels=1, out_channels=1, input_size=[1, 4], kernel_size=[2, 1],
                  dilation=[3, 1], padding=[[2, 2], [0, 0]])
    assert derived_names(c.params())["padding_only"] == (True, False)
    # transposed, length 1, kernel 2 dilated by 3, crop (1, 1): taps land at 0 and 3 of 0..3, outputs are 1 and 2
    t = make_case(id="q", op="conv_transpose1d", in_channels=1, out_channels=1, input_size=1, kernel_size=2,
                  dilation=3, padding=[[1, 1]])
    assert derived_names(t.params())["out_size"] == (2,) and derived_names(t.params())["padding_only"] == (True,)
    # the same with crop (0, 1): output 0 is tap 0
    u = make_case(id="r", op="conv_transpose1d", in_channels=1, out_channels=1, input_size=1, kernel_size=2,
                  dilation=3, padding=[[0, 1]])
    assert derived_names(u.params())["padding_only"] == (False,)


def test_an_invalid_case_has_pads_but_no_output_size():
    c = make_case(id="i", op="conv1d", in_channels=2, out_channels=2, input_size=2, kernel_size=5, padding=1,
                  expect="invalid")
    n = derived_names(c.params())
    assert n["pad_before"] == (1,) and "out_size" not in n and "acc_len" not in n
    assert set(n) <= set(DERIVED_NAMES)


def test_known_issues_select_on_the_derived_names_and_the_path():
    entry = KnownIssue(id="x", backend=["b"], device=[], cases={"path": "valid-pad-crop"}, status=["mismatch"],
                       reason="r", link="l",
                       when=compile_predicate("any(d > 1 and pb > 0 for d, pb in zip(dilation, pad_before))"))
    hit = make_case(id="h", op="conv1d", in_channels=1, out_channels=1, input_size=9, kernel_size=3, dilation=2,
                    padding=[[1, 0]])
    miss = make_case(id="m", op="conv1d", in_channels=1, out_channels=1, input_size=9, kernel_size=3, dilation=2,
                     padding=[[0, 1]])
    assert entry.matches(hit, "b", "cpu", path="valid-pad-crop")
    assert not entry.matches(hit, "b", "cpu", path="")  # another route: not this entry's
    assert entry.matches(hit, "b", "cpu")  # route unknown (before the run): a candidate
    assert not entry.matches(miss, "b", "cpu", path="valid-pad-crop")
    route = KnownIssue(id="y", backend=["b"], device=[], cases={}, status=["rejected"], reason="r", link="l",
                       when=compile_predicate("path != 'valid-pad-crop'"))
    assert route.matches(hit, "b", "cpu", path="") and not route.matches(hit, "b", "cpu", path="valid-pad-crop")


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    """Generated cases, valid and invalid (the fuzz generator's corners and boundaries among them)."""
    configs = itertools.islice(generate(21, invalid_rate=0.3), 100)
    return [c.case.params() for c in configs if c.case is not None]


def test_every_feature_is_the_selector_its_text_says(sample):
    table = FeatureTable.build(sample)
    table = table.with_thresholds(np.ones(len(sample), dtype=bool))
    names = [selector_names(p) for p in sample]
    for i, atom in enumerate(table.atoms):
        code = compile_predicate(atom.text)  # the selector language accepts it ...
        want = []
        for n in names:
            try:
                want.append(bool(evaluate(code, n)))
            except Exception:  # noqa: BLE001 - as known issues: an expression that raises does not match
                want.append(False)
        assert table.matrix[i].tolist() == want, atom.text  # ... and means what the matrix says


def test_features_of_a_few_cases_by_hand():
    c = make_case(id="a", op="conv2d", in_channels=4, out_channels=4, groups=4, input_size=[5, 6], kernel_size=3,
                  dilation=[2, 1], padding=[[1, 1], [0, 0]], layout="channels_last")
    table = FeatureTable.build([c.params()])
    on = {a.text for a, v in zip(table.atoms, table.matrix[:, 0]) if v}
    assert "any(d > 1 and pb > 0 for d, pb in zip(dilation, pad_before))" in on
    assert "groups > 1 and groups == in_channels" in on and "layout == 'channels_last'" in on
    assert "in_per_group == 1" in on and "any(n == 1 for n in input_size)" not in on
