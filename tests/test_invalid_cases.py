"""Invalid cases with an epilogue or a quantized dtype reach the framework, never an adapter error.

An invalid case has no output: the harness draws no epilogue constants and calibrates no y for it.
The worker then hands adapters the convolution alone (harness/execution/worker.py), and a quantized
one carries neutral parameters (harness/numerics/quant.py neutral), so the framework itself decides:
it rejects the case (pass), or runs it (accepted_invalid, a finding). Found by a 10-minute fuzz that
gave 89 `error` results on tvm, tvm-bound, the TVM importers, paddle and the torch.ao engines.
torch-pt2e (the seed-26 fuzz: `error` on a uint8 conv2d whose groups do not divide in_channels) built its
float nn.Conv2d outside the framework's guard: torch's constructor refusing the geometry is a rejection.
"""

from __future__ import annotations

import pytest

from harness.numerics.inputs import make_inputs
from tests.helpers import make_case, run_on

GROUPS_NOT_DIVIDING = dict(op="conv2d", in_channels=4, out_channels=6, input_size=5, kernel_size=3, groups=4,
                           bias=True, expect="invalid")
CASES = [
    make_case(id="epilogue_invalid", epilogue=["scale", "batch_norm", "residual", "relu"], **GROUPS_NOT_DIVIDING),
    make_case(id="quant_invalid", dtype="uint8", quant={"per_channel": True, "y_scale": 0.5}, **GROUPS_NOT_DIVIDING),
    make_case(id="quant_invalid_kernel", op="conv1d", in_channels=2, out_channels=2, input_size=3, kernel_size=5,
              dtype="int8", quant={"range": "narrow"}, expect="invalid"),
]


def test_an_invalid_quantized_case_has_neutral_parameters_and_keeps_what_is_pinned() -> None:
    p = make_inputs(CASES[1]).quant
    assert p is not None and p.per_channel and p.y_scale == 0.5
    assert (p.x_scale, p.x_zero_point, p.w_zero_point, p.y_zero_point) == (1.0, 0, 0, 0)
    assert list(p.w_scale) == [1.0] * 6


@pytest.mark.parametrize("backend", ["tvm", "tvm-bound", "tvm-torch-import", "tvm-onnx-import", "paddle",
                                     "torch-ao-x86", "torch-ao-qnnpack", "torch-pt2e"])
def test_no_adapter_error_on_invalid_cases(backend: str) -> None:
    for r in run_on(CASES, [backend], timeout=120.0):
        assert r.status in ("pass", "accepted_invalid", "unsupported", "crash"), (r.case_id, r.status, r.message)


# Every invalid input a framework can be given (cases/invalid_inputs.yaml), one of each form, and torch's unbatched
# input: adapters hand them over as stated. torch refuses each invalid one (its error inputs, whatever the CPU);
# a backend whose framework cannot be given the input at all says unsupported, never `error`.
FORMS = [
    make_case(id="stride_negative", **{**GROUPS_NOT_DIVIDING, "groups": 1}, stride=-1),
    make_case(id="padding_negative", **{**GROUPS_NOT_DIVIDING, "groups": 1}, padding=[-1, 1]),
    make_case(id="groups_zero", **{**GROUPS_NOT_DIVIDING, "groups": 0}),
    make_case(id="weight_rank", **{**GROUPS_NOT_DIVIDING, "groups": 1}, weight_shape=[6, 4, 3]),
    make_case(id="mixed_dtypes", **{**GROUPS_NOT_DIVIDING, "groups": 1}, dtype="float64", input_dtype="int64",
              weight_dtype="int64"),
    make_case(id="torch_same_strided", **{**GROUPS_NOT_DIVIDING, "groups": 1}, padding="same",
              same_convention="torch", stride=2),
    make_case(id="transpose_dilation_zero", **{**GROUPS_NOT_DIVIDING, "op": "conv_transpose2d", "groups": 1},
              dilation=0),
]
UNBATCHED = make_case(id="unbatched", op="conv_transpose1d", in_channels=2, out_channels=3, input_size=5, kernel_size=3,
                      stride=2, output_padding=1, bias=True, unbatched=True)


def test_torch_refuses_every_invalid_form_and_runs_the_unbatched_case() -> None:
    records = {r.case_id: r for r in run_on([*FORMS, UNBATCHED], ["torch"], timeout=120.0)}
    for case in FORMS:
        assert records[case.id].status == "pass", (case.id, records[case.id].message)
        assert records[case.id].message.startswith("rejected as expected"), records[case.id].message
    assert records["unbatched"].status == "pass" and records["unbatched"].max_abs_err is not None


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "onnxruntime", "tvm"])
def test_no_adapter_error_on_any_invalid_form(backend: str) -> None:
    records = run_on([*FORMS, UNBATCHED], [backend], timeout=120.0)
    for r in records:
        assert r.status in ("pass", "accepted_invalid", "unsupported", "crash"), (r.case_id, r.status, r.message)
    unbatched = next(r for r in records if r.case_id == "unbatched")
    assert unbatched.status == "unsupported" and "batch axis only" in unbatched.message
