"""`torch-pt2e`: torch.export -> torchao's X86InductorQuantizer (the case's qparams pinned) -> torch.compile,
through real isolated workers, judged by the exact integer oracle (harness/numerics/quant.py).

A pass means every element is within one unit of y of the oracle; here it also means inductor lowered
the conv to onednn.qconv_pointwise (the adapter refuses a result otherwise). Full-range data on a CPU
without VNNI is the known int16 pair saturation, decided from the worker's live host facts.
"""

from __future__ import annotations

import importlib.util

import pytest

from backends.torch.pt2e import INT8_REASON, TorchPt2eBackend
from harness.commands.smoke_select import full_tests
from harness.execution.records import Record
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_torch_pt2e")

COMMON = dict(in_channels=4, out_channels=6, input_size=7, kernel_size=3, bias=True, tags=["quantized"])
ALL_RUNS = [
    make_case(id="c2d_narrow", op="conv2d", dtype="uint8", quant={"range": "narrow"}, **COMMON),
    make_case(id="c2d_per_channel_asym_s2_nhwc", op="conv2d", dtype="uint8", stride=2, padding=[[1, 0], [0, 2]],
              layout="channels_last", quant={"per_channel": True, "range": "narrow"}, **COMMON),
    make_case(id="c2d_grouped_dilated", op="conv2d", dtype="uint8", groups=2, dilation=2, input_size=9,
              quant={"per_channel": True, "range": "narrow"}, **{k: v for k, v in COMMON.items() if k != "input_size"}),
    make_case(id="c2d_pinned", op="conv2d", dtype="uint8",  # full range (the default): saturates without VNNI
              quant={"x_scale": 0.02, "x_zero_point": 3, "w_scale": 0.005, "y_scale": 0.1, "y_zero_point": 250}, **COMMON),
    make_case(id="c2d_full", op="conv2d", dtype="uint8", quant={"range": "full"}, **COMMON),
    make_case(id="c2d_same", op="conv2d", dtype="uint8", padding="same", quant={"range": "narrow"}, **COMMON),
    make_case(id="c1d", op="conv1d", dtype="uint8", quant={"range": "narrow"}, **COMMON),
    make_case(id="t2d", op="conv_transpose2d", dtype="uint8", quant={"range": "narrow"}, **COMMON),
    make_case(id="c2d_s8", op="conv2d", dtype="int8", quant={"range": "narrow"}, **COMMON),
]
EXACT = ("c2d_narrow", "c2d_per_channel_asym_s2_nhwc", "c2d_grouped_dilated")
# Each case the recipe quantizes is an export, a quantization and an inductor compile (the module's fixture took
# 13.5 s with the six, 11.5 s with four: 2026-11-29, 2-core AMD EPYC Zen 4, quiet; 35 CPU-s with three, 2026-12-02,
# 2-core AMD EPYC Zen 5, empty cache): the plain narrow case, the grouped dilated one and the full-range one run in
# the nightly only (CONVDIFF_FULL_TESTS=1); make test keeps a per-channel asymmetric NHWC case (exact), the pinned
# full-range case that shows the host's saturation or its absence, and the quantizer's refusal and float leftovers.
NIGHTLY_ONLY = {"c2d_narrow", "c2d_grouped_dilated", "c2d_full"}
WHY = "an export, a quantization and a compile more: see NIGHTLY_ONLY"
RUNS = ALL_RUNS if full_tests() else [c for c in ALL_RUNS if c.id not in NIGHTLY_ONLY]


def ids(*case_ids: str) -> list:
    return [pytest.param(c, marks=pytest.mark.nightly(WHY)) if c in NIGHTLY_ONLY else c for c in case_ids]


def test_supports_says_what_the_x86_recipe_quantizes() -> None:
    """Pure: no framework is imported to decide it."""
    be = TorchPt2eBackend()
    by_id = {c.id: c for c in ALL_RUNS}
    assert be.supports(by_id["c2d_narrow"], "cpu") is None
    assert "annotates aten.conv2d only" in (be.supports(by_id["c1d"], "cpu") or "")
    assert "conv_transpose2d stays a float conv" in (be.supports(by_id["t2d"], "cpu") or "")
    assert be.supports(by_id["c2d_s8"], "cpu") == INT8_REASON
    assert "uint8/int8 cases only" in (be.supports(make_case(op="conv2d", **COMMON), "cpu") or "")
    wzp = make_case(op="conv2d", dtype="uint8", quant={"w_zero_point": 3}, **COMMON)
    assert "symmetric weight" in (be.supports(wzp, "cpu") or "")
    # an invalid asymmetric negative pad: F.pad would crop it into a valid conv, so torch would judge nothing
    # (the seed-3 fuzz, 2026-12-01: fuzz_3_1438, pads ((2, -1), (9, 9)), judged accepted_invalid before)
    cropped = make_case(op="conv2d", dtype="uint8", padding=[[2, -1], [1, 1]], expect="invalid", **COMMON)
    assert "asymmetric negative padding" in (be.supports(cropped, "cpu") or "")


NEEDS_TORCHAO = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("torchao") is None,
    reason="torch-pt2e needs torch and torchao (pip install torchao)")


@pytest.fixture(scope="module")
def records() -> dict[str, Record]:
    return {r.case_id: r for r in run_on(RUNS, ["torch-pt2e"], timeout=300.0, known=True)}


@NEEDS_TORCHAO
@pytest.mark.parametrize("case_id", ids(*EXACT))
def test_narrow_and_pinned_cases_match_the_integer_oracle(records: dict[str, Record], case_id: str) -> None:
    r = records[case_id]
    assert r.status == "pass", r.message
    assert r.max_abs_err is not None and r.max_abs_err <= 1.0  # units of y
    assert "convert_pt2e" in r.translation and "X86InductorQuantizer" in r.translation


@NEEDS_TORCHAO
@pytest.mark.parametrize("case_id", ids("c2d_full", "c2d_pinned"))
def test_full_range_passes_or_is_the_known_saturation_of_this_host(records: dict[str, Record], case_id: str) -> None:
    r = records[case_id]
    if r.known_issue == "torch-ao-onednn-int16-pair-saturation":  # selected by the oneDNN kernel ISA the worker ran (no VNNI)
        assert r.status == "mismatch" and r.diagnosis and "int16" in r.diagnosis
    else:
        assert r.status == "pass", r.message
        assert r.max_abs_err is not None and r.max_abs_err <= 1.0


@NEEDS_TORCHAO
def test_string_padding_is_the_known_quantizer_refusal(records: dict[str, Record]) -> None:
    r = records["c2d_same"]
    assert r.status == "rejected" and "not an aten conv2d operator" in r.message
    assert r.known_issue == "torchao-x86-quantizer-conv2d-string-padding" and not r.unexpected


@NEEDS_TORCHAO
@pytest.mark.parametrize("case_id", ["c1d", "t2d", "c2d_s8"])
def test_what_the_recipe_leaves_float_is_unsupported(records: dict[str, Record], case_id: str) -> None:
    r = records[case_id]
    assert r.status == "unsupported"
    assert r.message == TorchPt2eBackend().supports(next(c for c in RUNS if c.id == case_id), "cpu")
