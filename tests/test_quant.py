"""Quantized convolution: the exact oracle against brute-force integer loops and ONNX's QLinearConv
reference (onnx.reference), the seeded inputs, and the loader's refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness.model.build import make_case
from harness.model.yamlmap import InputError
from harness.numerics.inputs import make_inputs
from harness.numerics.quant import LIMITS, PAIRINGS, accumulate, quant_reference, saturated_accumulator


def brute_force(case, x, w, b, p) -> np.ndarray:
    """conv2d by nested loops over integers (channels first, explicit pads, groups), then requantized."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (pt, pb), (pl, pr) = case.geometry.pads
    sh, sw = case.stride
    dh, dw = case.dilation
    oh, ow = case.geometry.out_size
    xp = np.full((n, c, h + pt + pb, wd + pl + pr), p.x_zero_point, dtype=np.int64)  # pads hold real 0
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    og = o // case.groups
    out = np.zeros((n, o, oh, ow), dtype=np.int64)
    qmin, qmax = LIMITS[case.dtype]
    for b_, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        acc = 0
        for ci, u, v in itertools.product(range(cg), range(kh), range(kw)):
            acc += (int(xp[b_, g * cg + ci, i * sh + u * dh, j * sw + v * dw]) - p.x_zero_point) * (
                int(w[oc, ci, u, v]) - p.w_zero_point)
        acc += 0 if b is None else int(b[oc])
        m = p.x_scale * p.w_scale[oc] / p.y_scale
        out[b_, oc, i, j] = min(max(int(np.rint(acc * m)) + p.y_zero_point, qmin), qmax)
    return out


CASES = [
    dict(dtype="uint8", bias=True, padding=1, stride=2),
    dict(dtype="int8", bias=True, padding=[[1, 0], [0, 2]], dilation=2, quant={"per_channel": True}),
    dict(dtype="uint8", groups=2, in_channels=4, out_channels=4, quant={"range": "narrow"}),
    dict(dtype="int8", bias=False, quant={"per_channel": True, "w_zero_point": 3, "x_zero_point": -5}),
]


@pytest.mark.parametrize("over", CASES)
def test_oracle_matches_brute_force_integer_loops(over: dict) -> None:
    fields = {"op": "conv2d", "in_channels": 3, "out_channels": 4, "input_size": [6, 7], "kernel_size": 3, **over}
    case = make_case(id="q", **fields)
    inputs = make_inputs(case)
    y, _ = quant_reference(case, inputs.x, inputs.w, inputs.b, inputs.quant)
    np.testing.assert_array_equal(y.astype(np.int64), brute_force(case, inputs.x, inputs.w, inputs.b, inputs.quant))
    qmin, qmax = LIMITS[case.dtype]
    assert y.min() >= qmin and y.max() <= qmax and len(np.unique(y)) > 8  # calibrated: y spreads over the dtype


def _onnx_qlinearconv(case, x, w, b, p, w_scale) -> np.ndarray:
    """ONNX's own reference (onnx.reference) of one QLinearConv node, per-tensor weight scale."""
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    elem = TensorProto.UINT8 if case.dtype == "uint8" else TensorProto.INT8
    pads = [pb for pb, _ in case.geometry.pads] + [pa for _, pa in case.geometry.pads]
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", *(["b"] if b is not None else [])]
    node = helper.make_node("QLinearConv", names, ["y"], strides=list(case.stride), pads=pads,
                            dilations=list(case.dilation), group=case.groups if w.shape[0] == case.out_channels else 1)
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [p.x_scale]),
             helper.make_tensor("xz", elem, [], [p.x_zero_point]),
             helper.make_tensor("ws", TensorProto.FLOAT, [], [w_scale]),
             helper.make_tensor("wz", TensorProto.INT8, [], [p.w_zero_point]),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [p.y_scale]),
             helper.make_tensor("yz", elem, [], [p.y_zero_point]),
             onnx.numpy_helper.from_array(w, "w"), *([onnx.numpy_helper.from_array(b, "b")] if b is not None else [])]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


@pytest.mark.parametrize("over", CASES)
def test_oracle_matches_onnx_qlinearconv_reference(over: dict) -> None:
    """Equal, except by one unit where acc * multiplier sits at a rounding tie: ONNX's reference forms
    the multiplier in float32 and rounds after adding the zero point (ties to even then see the
    zero point's parity). Per-channel cases go one output channel at a time (onnx 1.17's reference
    cannot broadcast a per-channel scale: 'operands could not be broadcast')."""
    pytest.importorskip("onnx")
    from harness.numerics.quant import accumulate

    fields = {"op": "conv2d", "in_channels": 3, "out_channels": 4, "input_size": [6, 7], "kernel_size": 3, **over}
    case = make_case(id="q", **fields)
    inputs = make_inputs(case)
    p = inputs.quant
    if p.per_channel:
        assert case.groups == 1
        got = np.concatenate([_onnx_qlinearconv(case, inputs.x, inputs.w[c:c + 1], None if inputs.b is None else
                                                inputs.b[c:c + 1], p, p.w_scale[c]) for c in range(case.out_channels)], 1)
    else:
        got = _onnx_qlinearconv(case, inputs.x, inputs.w, inputs.b, p, p.w_scale[0])
    y, _ = quant_reference(case, inputs.x, inputs.w, inputs.b, p)
    diff = np.abs(got.astype(np.int64) - y.astype(np.int64))
    acc = accumulate(case, inputs.x, inputs.w, inputs.b, p.x_zero_point, p.w_zero_point)
    v = acc * (p.x_scale * p.w_scale.reshape(1, -1, 1, 1) / p.y_scale)
    at_tie = np.abs(np.abs(v - np.floor(v)) - 0.5) < 1e-4
    assert diff.max() <= 1 and np.all(at_tie[diff == 1]), (diff.max(), int((diff == 1).sum()))
    assert diff.mean() < 0.5


def test_inputs_are_seeded_and_typed() -> None:
    case = make_case(id="q", op="conv_transpose2d", in_channels=4, out_channels=6, input_size=5, kernel_size=3,
                     stride=2, bias=True, dtype="uint8", quant={"per_channel": True})
    a, b = make_inputs(case), make_inputs(case)
    np.testing.assert_array_equal(a.x, b.x)
    assert a.x.dtype == np.uint8 and a.w.dtype == np.int8 and a.b.dtype == np.int32
    assert a.quant.w_scale.shape == (6,) and len(set(a.quant.w_scale)) == 6  # one scale per output channel
    assert all(float(np.float32(s)) == s for s in (a.quant.x_scale, a.quant.y_scale, *a.quant.w_scale))


@pytest.mark.parametrize(("quant", "dtype", "field", "problem"), [
    ({"x_zero_point": 300}, "uint8", "quant[x_zero_point]", "must be within uint8's range [0, 255], got 300"),
    ({"y_zero_point": -129}, "int8", "quant[y_zero_point]", "must be within int8's range [-128, 127], got -129"),
    ({"x_scale": 0.0}, "uint8", "quant[x_scale]", "must be > 0"),
    ({"per_channel": True, "w_scale": [0.1, 0.2]}, "uint8", "quant[w_scale]", "one scale per output channel (3), got 2"),
    ({"w_scale": [0.1, 0.2, 0.3]}, "uint8", "quant[w_scale]", "a list of scales needs per_channel: true"),
    ({"per_channel": True}, "float32", "quant", "only quantized dtypes"),
])
def test_quant_makes_sense_or_is_a_line_error(tmp_path, quant, dtype, field, problem) -> None:
    import json

    path = tmp_path / "q.yaml"
    path.write_text("cases:\n  - id: a\n    op: conv2d\n    in_channels: 2\n    out_channels: 3\n    input_size: 4\n"
                    f"    kernel_size: 1\n    dtype: {dtype}\n    quant: {json.dumps(quant)}\n")
    from harness.model.loader import load_file

    with pytest.raises(InputError) as err:
        load_file(path)
    text = str(err.value)
    assert text.startswith(f"{path}:") and f": {field}: " in text and problem in text, text


# ---- the int16 pair saturation model (harness/numerics/quant.py saturated_accumulator) ----------
SAT_OPS = [
    dict(op="conv1d", in_channels=3, out_channels=2, input_size=7, kernel_size=3, padding=1, stride=2),
    dict(op="conv2d", in_channels=4, out_channels=4, input_size=[5, 6], kernel_size=[2, 3], groups=2, dilation=2),
    dict(op="conv3d", in_channels=1, out_channels=2, input_size=4, kernel_size=2, padding=[[1, 0], [0, 1], [0, 0]]),
    dict(op="conv_transpose1d", in_channels=3, out_channels=2, input_size=5, kernel_size=3, stride=2, padding=1,
         output_padding=1),
    dict(op="conv_transpose2d", in_channels=4, out_channels=6, input_size=[3, 4], kernel_size=3, stride=[2, 1],
         groups=2, dilation=[1, 2]),
    dict(op="conv_transpose3d", in_channels=2, out_channels=2, input_size=3, kernel_size=2, stride=2),
]


@pytest.mark.parametrize("pairing", PAIRINGS)
@pytest.mark.parametrize("over", SAT_OPS, ids=lambda o: o["op"])
def test_saturation_model_is_the_exact_accumulator_where_no_pair_saturates(over: dict, pairing: str) -> None:
    """Narrow data (|x - zp| and |w| <= 8, zp < 160: |pair| <= 2 * 168 * 8) never reaches int16's limit,
    so every packing and the zero-point correction must give the exact oracle's accumulator."""
    case = make_case(id="q", dtype="uint8", bias=True, quant={"range": "narrow"}, **over)
    inputs = make_inputs(case)
    p = inputs.quant
    exact = accumulate(case, inputs.x, inputs.w, inputs.b, p.x_zero_point, 0)
    np.testing.assert_array_equal(saturated_accumulator(case, inputs.x, inputs.w, inputs.b, p, pairing), exact)


def _hand_case(op: str, **over):
    case = make_case(id="q", op=op, dtype="uint8", in_channels=1, out_channels=1, input_size=2, kernel_size=2,
                     quant={"x_zero_point": 0}, **over)
    p = make_inputs(case).quant
    return case, p


@pytest.mark.parametrize("pairing, expected", [("channels", 2 * 255 * 127), ("im2col", 32767)])
def test_one_channel_two_taps_saturate_only_when_pairs_span_taps(pairing: str, expected: int) -> None:
    """x = [255, 255], w = [127, 127], one channel: channel pairs meet a zero pad channel (no
    saturation: 64770); the im2col row pairs the two taps, 64770 -> 32767."""
    case, p = _hand_case("conv1d")
    x, w = np.full((1, 1, 2), 255, np.uint8), np.full((1, 1, 2), 127, np.int8)
    assert saturated_accumulator(case, x, w, None, p, pairing).ravel().tolist() == [expected]


def test_transposed_pairs_saturate_with_the_zero_point_inserted() -> None:
    """conv_transpose1d, stride 1, k 2, x = [255, 255], w = [127, 127], x_zp 0: the middle output sums
    two taps (255*127 twice = 64770, one im2col pair -> 32767); each end has one product (32385)."""
    case, p = _hand_case("conv_transpose1d")
    x, w = np.full((1, 1, 2), 255, np.uint8), np.full((1, 1, 2), 127, np.int8)
    assert saturated_accumulator(case, x, w, None, p, "im2col").ravel().tolist() == [32385, 32767, 32385]
    assert saturated_accumulator(case, x, w, None, p, "channels").ravel().tolist() == [32385, 64770, 32385]
