"""Every invalid input a framework can be given, and torch's unbatched input, as cases.

The schema states them (harness/model/schema.py, validity.py): stride, dilation or groups below 1 and negative
padding; a weight of another shape (`weight_shape`); per-tensor dtypes (`input_dtype`, `weight_dtype`,
`bias_dtype`); torch's padding='same' (`same_convention: torch`); an input without a batch axis (`unbatched`).
Each is checked here against what it must mean: the loader's verdict (invalid, valid, or an input error with
its line), the tensors harness/numerics/inputs.py draws (shapes and dtypes as stated), the oracle of an
unbatched case (the batch-1 case's output without its batch axis), and the adapters' gate (backends/base.py
input_reason). tests/test_invalid_cases.py runs such cases through real frameworks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from backends.base import Backend, Capabilities
from harness.commands.cli import main
from harness.model.case import resolve_geometry
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference
from tests.helpers import make_case

BASE = dict(op="conv2d", in_channels=2, out_channels=4, input_size=[5, 6], kernel_size=3, bias=True)


@pytest.mark.parametrize("change,field", [
    (dict(stride=0), "stride"), (dict(stride=[1, -1]), "stride"), (dict(dilation=-2), "dilation"),
    (dict(groups=0), "groups"), (dict(groups=-1), "groups"), (dict(padding=-1), "padding"),
    (dict(padding=[[0, -1], [0, 0]]), "padding"),
])
def test_values_below_their_range_make_an_invalid_case_and_no_geometry(change: dict, field: str) -> None:
    case = make_case(**BASE, **change, expect="invalid")
    assert case.geometry is None
    with pytest.raises(ValueError, match=rf"^{field}: must be >= "):
        make_case(**BASE, **change)


def test_a_stated_weight_shape_is_the_weight_drawn() -> None:
    """torch's error input: groups 3 on 2 channels with the (2, 2, k) weight as it is, not (2, 0, k)."""
    case = make_case(op="conv1d", in_channels=2, out_channels=2, input_size=4, kernel_size=2, groups=3,
                     weight_shape=[2, 2, 2], expect="invalid")
    assert case.weight_shape == (2, 2, 2)
    assert make_inputs(case).w.shape == (2, 2, 2)
    lower = make_case(**BASE, weight_shape=[4, 2, 3], expect="invalid")  # a conv1d weight for a conv2d
    assert make_inputs(lower).w.shape == (4, 2, 3)


@pytest.mark.parametrize("shape,field", [([4, 2, 5, 5], "kernel_size"), ([3, 2, 3, 3], "out_channels")])
def test_a_weight_shape_that_contradicts_the_other_fields_is_an_input_error(shape: list[int], field: str) -> None:
    with pytest.raises(ValueError, match=rf"^{field}: .* contradicts weight_shape"):
        make_case(**BASE, weight_shape=shape, expect="invalid")


def test_channel_counts_that_do_not_match_the_weight_are_invalid() -> None:
    case = make_case(**{**BASE, "in_channels": 3}, weight_shape=[4, 2, 3, 3], expect="invalid")
    assert case.geometry is None and make_inputs(case).x.shape == (1, 3, 5, 6)
    with pytest.raises(ValueError, match="weight_shape: reads 2 input channels per group x 1 groups; the input has 3"):
        make_case(**{**BASE, "in_channels": 3}, weight_shape=[4, 2, 3, 3])
    transpose = make_case(**{**BASE, "op": "conv_transpose2d", "in_channels": 3}, weight_shape=[2, 4, 3, 3],
                          expect="invalid")
    assert make_inputs(transpose).w.shape == (2, 4, 3, 3)


def test_per_tensor_dtypes_are_drawn_as_stated() -> None:
    """torch's error inputs: an int64 input and weight with a float64 bias; a complex128 bias on float64."""
    case = make_case(**BASE, dtype="float64", input_dtype="int64", weight_dtype="int64", expect="invalid")
    inputs = make_inputs(case)
    assert (inputs.x.dtype, inputs.w.dtype, inputs.b.dtype) == (np.int64, np.int64, np.float64)
    assert case.tensor_dtypes == ("int64", "int64", "float64")
    assert np.abs(inputs.x).max() <= 3  # small integers
    complex_bias = make_inputs(make_case(**BASE, dtype="float64", bias_dtype="complex128", expect="invalid"))
    assert complex_bias.b.dtype == np.complex128 and np.any(complex_bias.b.imag)
    again = make_inputs(case)
    assert all(np.array_equal(a, b) for a, b in ((inputs.x, again.x), (inputs.w, again.w), (inputs.b, again.b)))


@pytest.mark.parametrize("fields,problem", [
    (dict(input_dtype="float64", weight_dtype="float64", bias_dtype="float64"), "input_dtype: every tensor is float64"),
    (dict(input_dtype="int32", weight_dtype="int32", bias_dtype="int32"), "input_dtype: int32 throughout"),
    (dict(bias=False, bias_dtype="float64"), "bias_dtype: needs bias: true"),
    (dict(dtype="uint8", input_dtype="int8"), "input_dtype: a quantized"),
])
def test_per_tensor_dtypes_that_state_no_invalid_input_are_input_errors(fields: dict, problem: str) -> None:
    """One dtype throughout is said with `dtype`; an integer or complex convolution torch computes is not
    invalid by its dtype (convdiff has no oracle for it), so it needs another fault."""
    with pytest.raises(ValueError, match=rf"^{problem}"):
        make_case(**{**BASE, **fields}, expect="invalid")
    assert make_case(**BASE, input_dtype="int32", weight_dtype="int32", bias_dtype="int32", stride=0,
                     expect="invalid").tensor_dtypes == ("int32", "int32", "int32")


def test_torchs_same_is_tensorflows_at_stride_1_and_invalid_where_torch_has_none() -> None:
    for k, d in ((2, 1), (3, 2), (4, 1)):
        torch_same = make_case(**{**BASE, "kernel_size": k}, dilation=d, padding="same", same_convention="torch")
        tf_same = make_case(**{**BASE, "kernel_size": k}, dilation=d, padding="same")
        assert torch_same.geometry == tf_same.geometry
        assert torch_same.geometry.out_size == (5, 6)  # torch's meaning: the input's length
    with pytest.raises(ValueError, match=r"^padding: torch's padding='same' needs stride 1"):
        make_case(**BASE, padding="same", same_convention="torch", stride=[1, 2])
    assert make_case(**BASE, padding="same", stride=2).geometry.out_size == (3, 3)  # TensorFlow's: any stride
    with pytest.raises(ValueError, match=r"^padding: torch's conv_transpose takes no padding='same'"):
        make_case(**{**BASE, "op": "conv_transpose2d"}, padding="same", same_convention="torch")
    with pytest.raises(ValueError, match=r"^same_convention: says whose padding: same is meant"):
        make_case(**BASE, padding=1, same_convention="torch", expect="invalid")


@pytest.mark.parametrize("op,layout", [("conv1d", "channels_first"), ("conv2d", "channels_last"),
                                       ("conv_transpose3d", "channels_first")])
def test_an_unbatched_case_is_the_batch_1_case_without_its_batch_axis(op: str, layout: str) -> None:
    """Inputs and oracle: the same draw and the same reference as the batch-1 case, less the leading axis."""
    fields = dict(op=op, in_channels=3, out_channels=4, input_size=4, kernel_size=3, bias=True, layout=layout,
                  stride=2, padding=1, seed=5)
    one, unbatched = make_case(**fields), make_case(**fields, unbatched=True)
    a, b = make_inputs(one), make_inputs(unbatched)
    assert unbatched.input_shape == one.input_shape[1:] == b.x.shape
    assert unbatched.output_shape == one.output_shape[1:]
    np.testing.assert_array_equal(a.x[0], b.x)
    np.testing.assert_array_equal(a.w, b.w)
    ref_one, scale_one = reference(one, a.x, a.w, a.b)
    ref, scale = reference(unbatched, b.x, b.w, b.b)
    np.testing.assert_array_equal(ref, ref_one[0])
    np.testing.assert_array_equal(scale, scale_one[0])
    assert unbatched.gradient_outputs == () and make_case(**fields, unbatched=True, gradients=True).gradient_outputs == ()


def test_unbatched_needs_batch_1_and_no_epilogue() -> None:
    with pytest.raises(ValueError, match=r"^batch: an unbatched input has no batch axis; got batch 2"):
        make_case(**BASE, unbatched=True, batch=2)
    with pytest.raises(ValueError, match=r"^unbatched: an unbatched case has no epilogue"):
        make_case(**BASE, unbatched=True, epilogue=["relu"])


def test_params_carry_the_later_fields_only_where_a_case_sets_them() -> None:
    """Cases written before these fields keep their records and artefact keys (backends/artifacts.py)."""
    v1 = {"op", "batch", "in_channels", "out_channels", "input_size", "kernel_size", "stride", "padding",
          "output_padding", "dilation", "groups", "bias", "layout", "dtype", "data", "seed", "expect", "tier",
          "tags", "gradients", "epilogue", "quant"}
    assert set(make_case(**BASE).params()) == v1
    stated = make_case(**BASE, dtype="float64", input_dtype="int64", weight_dtype="int64", weight_shape=[4, 2, 3, 3],
                       unbatched=True, expect="invalid").params()
    assert set(stated) - v1 == {"unbatched", "input_dtype", "weight_dtype", "weight_shape"}
    assert stated["weight_shape"] == [4, 2, 3, 3]


def test_geometry_is_total_over_any_integers() -> None:
    """Selectors and adapters resolve an invalid case's pads: a stride or dilation below 1 gives output 0."""
    geo = resolve_geometry(False, (5,), (3,), (0,), ((1, -1),), (), (1,))
    assert geo.pads == ((1, -1),) and geo.out_size == (0,)


class _Plain(Backend):
    name, framework = "plain", "plain"


class _Torchlike(Backend):
    name, framework = "torchlike", "torch"
    capabilities = Capabilities(unbatched=True, torch_same=True)


def test_the_gate_declares_what_a_framework_cannot_be_given() -> None:
    unbatched = make_case(**BASE, unbatched=True)
    strided = make_case(**BASE, padding="same", same_convention="torch", stride=2, expect="invalid")
    stride_1 = make_case(**BASE, padding="same", same_convention="torch", groups=-1, expect="invalid")
    assert "takes an input with a batch axis only" in _Plain().input_reason(unbatched)
    assert "has no plain spelling" in _Plain().input_reason(strided)
    assert _Plain().input_reason(stride_1) is None  # at stride 1 both conventions pad alike: any SAME states it
    assert _Torchlike().input_reason(unbatched) is None and _Torchlike().input_reason(strided) is None


def test_the_corpus_files_load(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = Path(__file__).resolve().parents[1] / "cases"
    assert main(["validate", str(root / "invalid_inputs.yaml"), str(root / "torch_forms.yaml")]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - id: a\n    op: conv2d\n    in_channels: 2\n    out_channels: 4\n    input_size: 5\n"
                   "    kernel_size: 3\n    expect: invalid\n    stride: 0\n    weight_shape: [4, 2, 5, 5]\n")
    capsys.readouterr()
    assert main(["validate", str(bad)]) == 2
    assert capsys.readouterr().err == f"{bad}:7: kernel_size: [3, 3] contradicts weight_shape's kernel [5, 5]\n"
