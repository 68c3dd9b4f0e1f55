"""Each diagnosis hypothesis against expectations derived by hand on tiny cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.judge.diagnosis import (
    HYPOTHESES,
    _round_tf32,
    conv1d_via_conv2d_bad_axis,
    diagnose,
    explains,
    flip_kernel,
    ignore_groups_in_transpose,
    ignore_output_padding,
    low_precision_accumulation,
    padding_off_by_one,
    padding_scaled_by_dilation,
    same_padding_extra_before,
    swap_transpose_weight_axes,
    zero_fill_output_padding,
)
from harness.model.case import resolve_geometry
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference

from .helpers import make_case

# DOMAIN.md's zero-fill seed: input 1x1x2x3, kernel 2x2, stride (2, 1), padding (1, 1), output_padding (1, 0)
SEED = make_case(id="seed", op="conv_transpose2d", in_channels=1, out_channels=1, input_size=[2, 3],
                 kernel_size=[2, 2], stride=[2, 1], padding=[1, 1], output_padding=[1, 0])
DOMAIN_NAMES = {"ignore_output_padding", "zero_fill_output_padding", "conv1d_via_conv2d_bad_axis",
                "swap_transpose_weight_axes", "ignore_groups_in_transpose", "same_padding_extra_before",
                "padding_scaled_by_dilation", "flip_kernel", "low_precision_accumulation"}


def only(hypothesis, case):
    """The single alternative a hypothesis yields for a case, evaluated: (inputs, alt output, canonical)."""
    inputs = make_inputs(case)
    alts = list(hypothesis(case, inputs))
    assert len(alts) == 1
    return inputs, alts[0].evaluate()[0], reference(case, inputs.x, inputs.w, inputs.b)[0]


def test_every_domain_class_has_a_hypothesis_named_after_its_mutant():
    names = {h.__name__ for h in HYPOTHESES}
    assert names >= DOMAIN_NAMES
    assert names - DOMAIN_NAMES == {"padding_off_by_one"}


def test_zero_fill_zeroes_the_last_row_of_the_domain_seed():
    _, alt, ref = only(zero_fill_output_padding, SEED)
    assert alt.shape == ref.shape == (1, 1, 3, 2)
    assert np.all(ref[0, 0, -1] != 0)  # PyTorch's last row is not zero ...
    assert np.all(alt[0, 0, -1] == 0)  # ... the bug's is
    np.testing.assert_array_equal(alt[0, 0, :-1], ref[0, 0, :-1])


def test_dropped_output_padding_is_the_canonical_output_without_its_last_row():
    # full height (2-1)*2 + 2 = 4, cropped 1 each side: rows 1..2 without the extension, 1..3 with it
    _, alt, ref = only(ignore_output_padding, SEED)
    assert alt.shape == (1, 1, 2, 2)
    np.testing.assert_allclose(alt, ref[:, :, :2], rtol=1e-12)


def test_flipped_kernel_is_the_oracle_with_w_flipped():
    case = make_case(id="f", op="conv2d", in_channels=2, out_channels=3, input_size=[4, 5], kernel_size=[2, 3])
    inputs, alt, _ = only(flip_kernel, case)
    want, _ = reference(case, inputs.x, inputs.w[:, :, ::-1, ::-1], inputs.b)
    np.testing.assert_allclose(alt, want, rtol=1e-12)
    assert not list(flip_kernel(dataclasses.replace(case, kernel_size=(1, 1)), inputs))  # nothing to flip


def test_swapped_axes_of_a_square_transposed_weight_is_its_transpose():
    case = make_case(id="s", op="conv_transpose1d", in_channels=3, out_channels=3, input_size=4, kernel_size=2)
    inputs, alt, _ = only(swap_transpose_weight_axes, case)
    want, _ = reference(case, inputs.x, inputs.w.transpose(1, 0, 2), inputs.b)
    np.testing.assert_allclose(alt, want, rtol=1e-12)


def test_groups_ignored_sums_the_groups_channelwise():
    # grouped: out[g*og + o] = sum_{i in g} x_i * w[i, o]; ignored: out[o] = sum_all_i x_i * w[i, o]
    case = make_case(id="g", op="conv_transpose2d", in_channels=4, out_channels=6, groups=2,
                     input_size=3, kernel_size=2, stride=2)
    _, alt, ref = only(ignore_groups_in_transpose, case)
    assert alt.shape == (1, 3, 6, 6)
    np.testing.assert_allclose(alt, ref.reshape(1, 2, 3, 6, 6).sum(axis=1), rtol=1e-12)


def test_padding_scaled_by_dilation_pads_before_by_pad_times_dilation():
    # conv1d, input 6, kernel 2, dilation 3, padding (1, 1): canonical (6 + 2 - 3 - 1) + 1 = 5 windows, window j
    # starting at j - 1; the bug pads (3, 1): (6 + 4 - 3 - 1) + 1 = 7 windows, window j starting at j - 3, so its
    # window j + 2 is the canonical window j
    case = make_case(id="p", op="conv1d", in_channels=1, out_channels=1, input_size=6, kernel_size=2, dilation=3,
                     padding=1)
    _, alt, ref = only(padding_scaled_by_dilation, case)
    assert ref.shape == (1, 1, 5) and alt.shape == (1, 1, 7)
    np.testing.assert_allclose(alt[0, 0, 2:], ref[0, 0, :])
    # nothing to scale without dilation, or without a pad before
    assert not list(padding_scaled_by_dilation(make_case(id="q", op="conv1d", in_channels=1, out_channels=1,
                                                         input_size=6, kernel_size=2, padding=1), make_inputs(case)))
    assert not list(padding_scaled_by_dilation(make_case(id="r", op="conv1d", in_channels=1, out_channels=1,
                                                         input_size=6, kernel_size=2, dilation=3, padding=[[0, 1]]),
                                               make_inputs(case)))


def test_same_extra_before_shifts_an_even_kernel_by_one():
    # L=4, k=2, SAME pads (0, 1); with the odd element before, (1, 0): output j is canonical j-1
    case = make_case(id="p", op="conv1d", in_channels=1, out_channels=1, input_size=4, kernel_size=2, padding="same")
    inputs, alt, ref = only(same_padding_extra_before, case)
    np.testing.assert_allclose(alt[..., 1:], ref[..., :-1], rtol=1e-12)
    assert alt[0, 0, 0] == pytest.approx(inputs.w[0, 0, 1] * inputs.x[0, 0, 0])


def test_padding_off_by_one_tries_each_side_each_way():
    case = make_case(id="o", op="conv1d", in_channels=1, out_channels=1, input_size=5, kernel_size=3, padding=1)
    inputs = make_inputs(case)
    alts = list(padding_off_by_one(case, inputs))
    assert sorted(a.case.geometry.pads for a in alts) == [((0, 1),), ((1, 0),), ((1, 2),), ((2, 1),)]
    ref = reference(case, inputs.x, inputs.w, inputs.b)[0]
    extra_before = next(a for a in alts if a.case.geometry.pads == ((2, 1),)).evaluate()[0]
    np.testing.assert_allclose(extra_before[..., 1:], ref, rtol=1e-12)


def test_bad_axis_sends_stride_to_the_dummy_axis():
    # conv1d stride 2 lowered with the dummy axis last but stride (1, 2): a stride-1 convolution
    case = make_case(id="b", op="conv1d", in_channels=2, out_channels=2, input_size=7, kernel_size=3, stride=2)
    inputs, alt, _ = only(conv1d_via_conv2d_bad_axis, case)
    unstrided = dataclasses.replace(case, stride=(1,), geometry=resolve_geometry(False, (7,), (3,), (1,), ((0, 0),), (), (1,)))
    want, _ = reference(unstrided, inputs.x, inputs.w, inputs.b)
    assert alt.shape == (1, 2, 5)
    np.testing.assert_allclose(alt, want, rtol=1e-12)


def test_tf32_rounding_keeps_ten_mantissa_bits_ties_to_even():
    vals = np.array([1 + 2**-10, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-12, -(1 + 2**-10 + 2**-12)], np.float32)
    want = np.array([1 + 2**-10, 1, 1 + 2**-9, 1, -(1 + 2**-10)], np.float32)
    np.testing.assert_array_equal(_round_tf32(vals), want)


def test_low_precision_alternatives_use_rounded_inputs_and_only_for_float32():
    case = make_case(id="l", op="conv2d", in_channels=2, out_channels=2, input_size=4, kernel_size=2)
    inputs = make_inputs(case)
    alts = list(low_precision_accumulation(case, inputs))
    # tf32, float16, bfloat16 with float32 sums; then float16, bfloat16 sums (K = 8: short enough)
    assert [(a.round_u, a.sum_u) for a in alts] == [(0, 0), (2**-11, 0), (2**-8, 0), (2**-11, 2**-11), (2**-8, 2**-8)]
    np.testing.assert_array_equal(alts[1].x, inputs.x.astype(np.float16).astype(np.float64))
    assert not list(low_precision_accumulation(dataclasses.replace(case, dtype="float16"), inputs))


def simulate(case, x, w, b, dtype=np.float32):
    return reference(case, x, w, b)[0].astype(dtype)


def test_diagnose_names_a_float16_computation():
    case = make_case(id="h", op="conv2d", in_channels=3, out_channels=2, input_size=5, kernel_size=3)
    inputs = make_inputs(case)
    h = [a.astype(np.float16) for a in (inputs.x, inputs.w)]
    out = simulate(case, *h, None).astype(np.float16).astype(np.float32)
    assert diagnose(case, inputs, out) == "low_precision_accumulation"


def test_a_dropped_product_is_not_called_low_precision():
    # one output element misses one tap: small next to |x|*|w| summed, but a semantic bug, not rounding
    case = make_case(id="d", op="conv2d", in_channels=4, out_channels=2, input_size=5, kernel_size=3)
    inputs = make_inputs(case)
    out = simulate(case, inputs.x, inputs.w, None)
    out[0, 0, 1, 1] -= inputs.x[0, 0, 1, 1] * inputs.w[0, 0, 0, 0]
    assert diagnose(case, inputs, out) is None


def test_diagnose_prefers_the_specific_hypothesis():
    # dropping output_padding 1 is also 'one more crop at the end': both explain it, the specific one wins
    inputs = make_inputs(SEED)
    alt = next(ignore_output_padding(SEED, inputs))
    out = alt.evaluate()[0].astype(np.float32)
    off = [a for a in padding_off_by_one(SEED, inputs) if explains(SEED, a, out.astype(np.float64), None)]
    assert off, "padding_off_by_one should explain it too"
    assert diagnose(SEED, inputs, out) == "ignore_output_padding"


def test_diagnose_never_names_an_alternative_equal_to_the_canonical_output():
    # a 1x1 kernel: flipping changes nothing, so a correct output has no diagnosis ...
    case = make_case(id="c", op="conv2d", in_channels=2, out_channels=2, input_size=3, kernel_size=1)
    inputs = make_inputs(case)
    assert diagnose(case, inputs, simulate(case, inputs.x, inputs.w, inputs.b)) is None
    # ... and neither has an output no hypothesis explains
    assert diagnose(case, inputs, simulate(case, inputs.x, inputs.w, inputs.b) + 1.0) is None


@pytest.mark.parametrize("hypothesis", [h for h in HYPOTHESES if h.__name__ != "low_precision_accumulation"])
def test_diagnose_recovers_each_semantic_hypothesis_from_its_own_output(hypothesis):
    case = {
        "conv1d_via_conv2d_bad_axis": make_case(id="a", op="conv1d", in_channels=2, out_channels=3, input_size=9,
                                                kernel_size=3, stride=2, padding=1),
        "same_padding_extra_before": make_case(id="a", op="conv2d", in_channels=1, out_channels=2,
                                               input_size=[4, 5], kernel_size=2, padding="same"),
        "ignore_groups_in_transpose": make_case(id="a", op="conv_transpose2d", in_channels=4, out_channels=6,
                                                groups=2, input_size=3, kernel_size=2, stride=2),
        "swap_transpose_weight_axes": make_case(id="a", op="conv_transpose2d", in_channels=4, out_channels=6,
                                                groups=2, input_size=3, kernel_size=2, stride=2),
        "flip_kernel": make_case(id="a", op="conv2d", in_channels=2, out_channels=2, input_size=4, kernel_size=[2, 3]),
        "padding_off_by_one": make_case(id="a", op="conv2d", in_channels=2, out_channels=2, input_size=5,
                                        kernel_size=3, padding=[[1, 1], [1, 2]]),
        "padding_scaled_by_dilation": make_case(id="a", op="conv2d", in_channels=2, out_channels=2,
                                                input_size=[7, 6], kernel_size=3, dilation=[2, 1], padding=2),
    }.get(hypothesis.__name__, SEED)
    inputs = make_inputs(case)
    out = next(iter(hypothesis(case, inputs))).evaluate()[0].astype(np.float32)
    assert diagnose(case, inputs, out) == hypothesis.__name__
