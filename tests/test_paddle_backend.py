"""The Paddle adapters' translations against the oracle, through real isolated workers.

One run_on call carries every case (the workers stay warm), so the module stays fast;
paddle is never imported here (run_on skips when it is not installed).
Each case is built so that a wrong translation (layout, padding form, output_padding vs
output_size, weight layout, groups) changes shape or values, and the oracle catches it.
"""

from __future__ import annotations

from typing import Any

from backends.paddle.eager import padding_argument
from harness.model.case import Case
from tests.helpers import make_case, run_on

OPS = {1: ("conv1d", "conv_transpose1d"), 2: ("conv2d", "conv_transpose2d"), 3: ("conv3d", "conv_transpose3d")}
SIZES = {1: 7, 2: [6, 5], 3: [4, 5, 3]}
PAIRS = {1: [[2, 0]], 2: [[0, 2], [1, 0]], 3: [[1, 0], [0, 2], [2, 1]]}
UNEQUAL = {1: [1], 2: [1, 2], 3: [2, 1, 0]}  # symmetric, one value per dim


def _cases() -> list[Case]:
    """Every rank x layout x padding form x dtype, forward and transposed; all must pass."""
    out: list[Case] = []

    def add(**f: Any) -> None:
        out.append(make_case(id=f"c{len(out)}", bias=True, **f))

    for rank, (conv, tconv) in OPS.items():
        n = SIZES[rank]
        for layout in ("channels_first", "channels_last"):
            for dtype in ("float64", "float32"):
                common = dict(input_size=n, layout=layout, dtype=dtype, in_channels=4, out_channels=6)
                for pad in (1, UNEQUAL[rank], PAIRS[rank], "valid"):
                    add(op=conv, kernel_size=3, stride=2, padding=pad, groups=2, **common)
                    add(op=tconv, kernel_size=3, stride=2, padding=pad, groups=2, **common,
                        output_padding=0 if pad == "valid" else 1)
                add(op=conv, kernel_size=3, stride=2, padding="same", **common)  # TF SAME, stride 2
                add(op=conv, kernel_size=2, padding="same", dilation=1, **common)  # even kernel: pad after
                # transposed SAME where Paddle's SAME agrees with TF's: L % s == 0 and k >= s
                add(op=tconv, kernel_size=3, stride=2, padding="same",
                    **{**common, "input_size": [4] * rank})
                # output_padding < stride with dilation, depthwise (Paddle's depthwise transpose kernel)
                add(op=tconv, kernel_size=3, stride=3, dilation=2, padding=PAIRS[rank], output_padding=2,
                    groups=4, **{**common, "out_channels": 4})
                add(op=conv, kernel_size=3, stride=1, dilation=2, padding=UNEQUAL[rank], groups=4, data="integers",
                    **{**common, "out_channels": 8, "input_size": [6] * rank})
    return out


def test_padding_argument_native_forms() -> None:
    assert padding_argument(((1, 1), (1, 1)), False) == 1
    assert padding_argument(((1, 1), (2, 2)), True) == [1, 2]
    assert padding_argument(((0, 2), (1, 0)), False) == [0, 2, 1, 0]
    assert padding_argument(((0, 2), (1, 0)), True) == [[0, 0], [0, 2], [1, 0], [0, 0]]


def test_translations_match_the_oracle_at_every_rank() -> None:
    cases = _cases()
    records = run_on(cases, ["paddle", "paddle-output-size"])
    by_id = {c.id: c for c in cases}
    assert len(records) == 2 * len(cases)
    bad = []
    for r in records:
        case = by_id[r.case_id]
        if r.backend == "paddle-output-size" and not case.transpose:
            assert r.status == "unsupported" and "output_size" in r.message
            continue
        if r.status != "pass":
            bad.append(f"{r.backend} {case.op} {case.layout} {case.padding} {case.dtype}: {r.status} {r.message}")
            continue
        assert r.bound_ratio is not None and r.bound_ratio <= 1
        call = r.translation
        fmt = {"channels_first": "data_format='NC", "channels_last": "data_format='N"}[case.layout]
        assert fmt in call, call
        if case.channels_last:
            assert "C'" in call.split("data_format=")[1][:8], call
        if case.transpose and case.padding != "same":
            # output_size on one path, output_padding on the other: never both, never neither
            uses = ("output_size=" in call, "output_padding=" in call)
            want_padding = r.backend == "paddle" and any(case.output_padding)
            assert uses == (r.backend == "paddle-output-size", want_padding), call
        if case.padding == ((0, 2), (1, 0)) and case.channels_last:
            assert "padding=[[0, 0], [0, 2], [1, 0], [0, 0]]" in call, call
        if case.padding in ("same", "valid"):
            assert f"padding={case.padding.upper()!r}" in call, call
    assert not bad, "\n".join(bad)


def test_missing_kernels_rejections_and_invalid_cases() -> None:
    f16 = make_case(id="f16", op="conv_transpose1d", in_channels=2, out_channels=2, input_size=5,
                    kernel_size=3, dtype="float16")
    bf16 = make_case(id="bf16", op="conv2d", in_channels=2, out_channels=2, input_size=5, kernel_size=3,
                     dtype="bfloat16")
    # valid for PyTorch (output_padding < dilation) but Paddle needs output_padding < stride
    ge_stride = make_case(id="ge_stride", op="conv_transpose2d", in_channels=2, out_channels=2, input_size=4,
                          kernel_size=3, dilation=2, output_padding=1)
    invalid = make_case(id="invalid", op="conv2d", in_channels=3, out_channels=4, input_size=5, kernel_size=3,
                        groups=2, expect="invalid")
    records = {r.case_id: r for r in run_on([f16, bf16, ge_stride, invalid], ["paddle"])}
    assert records["f16"].status == "unsupported"
    assert "float16 kernel for conv2d_transpose" in records["f16"].message  # 1-D runs on the 2-D kernel
    assert records["bf16"].status == "unsupported" and "bfloat16 kernel for conv2d" in records["bf16"].message
    assert records["ge_stride"].status == "rejected" and records["ge_stride"].message.startswith("ValueError")
    assert records["invalid"].status == "pass"  # Paddle raised: the right outcome for an invalid case
