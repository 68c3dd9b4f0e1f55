"""TensorFlow adapters against the oracle: every rank, both layouts, each padding translation.

All cases go through one run_on call (real isolated workers), so TF starts once per backend.
"""

from __future__ import annotations

import re

import pytest

from backends.tensorflow.util import NHWC_ONLY
from harness.execution.records import Record
from harness.model.case import Case
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_tensorflow_backend")

BACKENDS = ("tensorflow", "tensorflow-keras")
OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")

# padding name -> case fields; sizes chosen so SAME crops/pads an odd total somewhere.
PADDINGS = {
    "same": {"padding": "same"},
    "valid": {"padding": "valid"},
    "sym": {"padding": 1},
    "asym": {"padding": "ASYM"},
}


def _fields(op: str, pad: str, layout: str, dtype: str) -> dict:
    rank = int(op[-2])
    f = {"op": op, "in_channels": 3, "out_channels": 4, "input_size": [5, 6, 4][:rank],
         "kernel_size": 3, "stride": 2, "layout": layout, "dtype": dtype, "bias": True, **PADDINGS[pad]}
    if pad == "asym":
        f["padding"] = [[2, 1], [0, 1], [1, 0]][:rank]
    if op.startswith("conv_transpose") and pad in ("sym", "asym"):
        f["output_padding"] = 1  # output_padding through output_shape / keras output_padding
    return f


def _build() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for op in OPS:
        for pad in PADDINGS:
            for layout in ("channels_first", "channels_last"):
                for dtype in ("float32", "float64"):
                    cid = f"{op}_{pad}_{layout}_{dtype}"
                    cases[cid] = make_case(id=cid, **_fields(op, pad, layout, dtype))
    extra = {
        "t1d_same_k2_s3": dict(op="conv_transpose1d", padding="same", kernel_size=2, stride=3, input_size=7),
        "t3d_torch_p1_op1_int": dict(op="conv_transpose3d", padding=1, output_padding=1, kernel_size=3,
                                     stride=2, input_size=[3, 4, 3], data="integers"),
        "t1d_outpad_ge_stride": dict(op="conv_transpose1d", kernel_size=2, stride=1, dilation=3, padding=1,
                                     output_padding=2, input_size=5),
        "conv1d_causal": dict(op="conv1d", padding=[[4, 0]], kernel_size=3, dilation=2, input_size=9, groups=3),
        "conv2d_grouped": dict(op="conv2d", groups=3, in_channels=6, out_channels=9, padding=1, input_size=6),
        "conv3d_grouped": dict(op="conv3d", groups=3, in_channels=6, out_channels=6, padding=1, input_size=4),
        "t2d_grouped": dict(op="conv_transpose2d", groups=2, in_channels=4, out_channels=4, stride=2, input_size=4),
        "t3d_grouped": dict(op="conv_transpose3d", groups=2, in_channels=4, out_channels=4, stride=2, input_size=3),
        "conv2d_stride_dilation": dict(op="conv2d", stride=2, dilation=2, padding=2, input_size=9),
    }
    for cid, f in extra.items():
        base = {"in_channels": 3, "out_channels": 6, "kernel_size": 3, "bias": True}
        cases[cid] = make_case(id=cid, **{**base, **f})
    return cases


CASES = _build()


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], Record]:
    records = run_on(list(CASES.values()), BACKENDS, timeout=60.0, known=True)
    return {(r.backend, r.case_id): r for r in records}


def _get(results: dict[tuple[str, str], Record], backend: str, cid: str) -> Record:
    rec = results.get((backend, cid))
    assert rec is not None, f"no result for {cid} on {backend}"
    return rec


MATRIX = [cid for cid in CASES if cid.count("_") >= 3 and cid.startswith("conv")]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cid", MATRIX)
def test_translation_matches_oracle(results: dict, backend: str, cid: str) -> None:
    rec = _get(results, backend, cid)
    assert rec.status == "pass", f"{rec.status}: {rec.message}\n{rec.translation}"
    assert rec.bound_ratio is not None and rec.bound_ratio <= 1.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cid", ["t1d_same_k2_s3", "t3d_torch_p1_op1_int", "conv1d_causal", "conv2d_grouped"])
def test_extra_translations_pass(results: dict, backend: str, cid: str) -> None:
    rec = _get(results, backend, cid)
    assert rec.status == "pass", f"{rec.status}: {rec.message}\n{rec.translation}"


@pytest.mark.parametrize(("cid", "needle"), [
    ("conv2d_asym_channels_last_float32", "[[0, 0], [2, 1], [0, 1], [0, 0]], data_format='NHWC'"),
    ("conv1d_asym_channels_last_float32", "x = tf.pad(x, [[0, 0], [2, 1], [0, 0]])"),
    ("conv_transpose2d_asym_channels_last_float32", "padding=[[0, 0], [2, 1], [0, 1], [0, 0]]"),
    ("conv_transpose1d_sym_channels_last_float32", "padding='VALID'"),
    ("conv_transpose1d_same_channels_last_float32", "output_shape=[1, 10, 4], strides=[1, 2, 1], padding='SAME'"),
    ("conv2d_same_channels_first_float64", "# exact identity: channels_first"),
])
def test_tf_translation_text(results: dict, cid: str, needle: str) -> None:
    """The code recorded is the native call where TF has one, an identity (with a note) only where not."""
    rec = _get(results, "tensorflow", cid)
    assert needle in rec.translation, rec.translation


@pytest.mark.parametrize("cid", [c for c in MATRIX if "_channels_first_" in c])
def test_channels_first_is_native_unless_tf_refuses_it(results: dict, cid: str) -> None:
    """NC* goes to TF as data_format='NC*'; the N*C identity only where TF itself refused that call here.

    Which calls TF refuses depends on the host (oneDNN runs NCDHW transposed convs; Eigen does not),
    so the test takes TF's own answer, quoted in the note, as the truth.
    """
    layout = "NC" + "DHW"[3 - CASES[cid].rank:]
    t = _get(results, "tensorflow", cid).translation
    if f"data_format='{layout}'" in t:
        assert "exact identity: channels_first" not in t, t
    else:
        refusal = re.search(rf"# exact identity: channels_first: TF on cpu refused the {layout} call \((.*)\); data transposed", t)
        assert refusal and NHWC_ONLY.search(refusal.group(1)), t


def test_identities_are_recorded(results: dict) -> None:
    tf_t1d = _get(results, "tensorflow", "conv_transpose1d_asym_channels_last_float32").translation
    assert "# exact identity: conv1d_transpose has no explicit padding" in tf_t1d
    assert "y = y[:, 2:-1, :]" in tf_t1d
    assert "exact identity" not in _get(results, "tensorflow", "conv2d_asym_channels_last_float32").translation
    keras_t2d = _get(results, "tensorflow-keras", "conv_transpose2d_sym_channels_last_float32").translation
    assert "padding='valid', output_padding=(1, 1)" in keras_t2d and "y = y[:, 1:-1, 1:-1, :]" in keras_t2d
    assert "padding='causal'" in _get(results, "tensorflow-keras", "conv1d_causal").translation


def test_output_padding_ge_stride(results: dict) -> None:
    """tf.nn: VALID + zero tail identity passes; keras refuses output_padding >= strides itself.

    The case is dilated (output_padding >= stride needs dilation > stride): where TF's CPU kernels
    refuse dilated transposed convs (oneDNN off), that is the host-selected known issue, nothing else.
    """
    rec = _get(results, "tensorflow", "t1d_outpad_ge_stride")
    assert rec.status == "pass" or (rec.status == "rejected" and "dilation rates larger than 1" in rec.message
                                    and rec.known_issue == "tf-cpu-dilated-transpose-without-onednn"), rec
    rec = _get(results, "tensorflow-keras", "t1d_outpad_ge_stride")
    assert rec.status == "rejected" and "output_padding" in rec.message


@pytest.mark.parametrize(("backend", "cid", "words"), [
    ("tensorflow", "t3d_grouped", "grouped conv3d_transpose"),
    ("tensorflow-keras", "t2d_grouped", "no groups argument"),
    ("tensorflow", "conv3d_grouped", "grouped conv3d"),
    ("tensorflow-keras", "conv2d_stride_dilation", "strides > 1 together with dilation_rate > 1"),
])
def test_unsupported_names_the_feature(results: dict, backend: str, cid: str, words: str) -> None:
    rec = _get(results, backend, cid)
    assert rec.status == "unsupported" and words in rec.message, (rec.status, rec.message)


def test_grouped_transpose2d_runs_natively(results: dict) -> None:
    """A filter of depth O/g states the groups (found by `convdiff backends --probe`): oneDNN's kernel
    runs it; TF's own CPU kernel (oneDNN off) refuses, which is the host-selected known issue."""
    rec = _get(results, "tensorflow", "t2d_grouped")
    assert rec.status == "pass" or (rec.status == "rejected" and "grouped convolutions" in rec.message
                                    and rec.known_issue == "tf-cpu-grouped-transpose-without-onednn"), rec


def test_supported_elsewhere(results: dict) -> None:
    """What one variant lacks the other must still run: keras grouped conv3d, tf.nn strided dilation."""
    assert _get(results, "tensorflow-keras", "conv3d_grouped").status == "pass"
    assert _get(results, "tensorflow", "conv2d_stride_dilation").status == "pass"


def test_the_crop_counts_its_end_from_the_back() -> None:
    """crop_output slices [before, -after] without reading the output's length: inside a tf.function TF leaves
    a length it cannot infer (a negative stride's output_shape) as None, where `length - after` failed in the
    adapter and its TypeError passed for TensorFlow's refusal."""
    import numpy as np

    from backends.tensorflow.translate import crop_output

    class Unknown:  # a traced tensor whose spatial lengths TF does not know
        shape = (1, 2, None, None)

        def __getitem__(self, index: tuple) -> tuple:
            return index

    assert crop_output(Unknown(), ((1, 2), (0, 0)), True) == (slice(None), slice(None), slice(1, -2), slice(0, None))
    assert crop_output(Unknown(), ((1, 2),), False) == (slice(None), slice(1, -2), slice(None))
    y = np.arange(2 * 3 * 7 * 5).reshape(2, 3, 7, 5)
    assert np.array_equal(crop_output(y, ((1, 2), (0, 1)), True), y[:, :, 1:5, 0:4])
    assert np.array_equal(crop_output(y.transpose(0, 2, 3, 1), ((1, 2), (0, 1)), False),
                          y.transpose(0, 2, 3, 1)[:, 1:5, 0:4, :])


def test_an_invalid_negative_pad_never_takes_the_same_route() -> None:
    """conv_transpose1d of length 6, kernel 1, stride 2, pads (0, -1): invalid (a negative pad). Its numbers are those
    of TF's SAME: full length (6 - 1) * 2 + 1 = 11, extended by 1 to 12 = 6 * 2, which SAME with output_shape 12
    gives by itself (the kernel is shorter than the stride). Handed that SAME call, TF would never see the negative
    pad and "accept" the case (a seed-7 fuzz signature on tensorflow, tensorflow-graph and tf-xla, 2026-11-30). It
    goes to a VALID transpose, whose crop makes it unsupported; the same pads in conv_transpose2d, whose explicit
    pairs TF takes, still reach TF."""
    from backends.tensorflow.eager import TensorFlowBackend
    from backends.tensorflow.translate import nn_call

    for op, rank in (("conv_transpose1d", 1), ("conv_transpose3d", 3)):
        invalid = make_case(id=f"{op}_negative_pad", op=op, in_channels=1, out_channels=3, input_size=6,
                            kernel_size=1, stride=2, padding=[[0, -1]] * rank, expect="invalid")
        assert invalid.geometry is None and nn_call(invalid, True).padding == "VALID"
        reason = TensorFlowBackend().supports(invalid, "cpu")
        assert reason is not None and "takes no explicit padding" in reason, op
    native = make_case(id="t2d_negative_pad", op="conv_transpose2d", in_channels=1, out_channels=3, input_size=6,
                       kernel_size=1, stride=2, padding=[[0, -1]] * 2, expect="invalid")
    assert TensorFlowBackend().supports(native, "cpu") is None
    assert nn_call(native, True).padding[-1] == [0, -1]


def test_an_invalid_output_padding_never_takes_the_same_route() -> None:
    """conv_transpose1d of length 3, kernel 1, stride 2, pads (0, 1), output_padding 2: invalid (2 >= max(stride,
    dilation)). Its numbers are those of a valid call: full length (3 - 1) * 2 + 1 = 5, plus 2 = 7, cropped (0, 1)
    to 6, and TF's SAME takes any output_shape with ceil(6 / 2) == 3 and crops nothing. Handed that SAME call, TF
    would see a valid convolution and "accept" the case (a seed-7 fuzz signature on tf-xla, 2026-11-30). The
    translation must leave such a case to a VALID transpose (whose crop makes it unsupported), while the valid
    twin with output_padding 1 (5 + 1 - 1 = 5 outputs, the same pads) still takes SAME."""
    from backends.tensorflow.eager import TensorFlowBackend
    from backends.tensorflow.translate import nn_call

    invalid = make_case(id="t1d_outpad_invalid", op="conv_transpose1d", in_channels=3, out_channels=3, input_size=3,
                        kernel_size=1, stride=2, padding=[[0, 1]], output_padding=2, expect="invalid")
    assert invalid.geometry is None
    assert nn_call(invalid, True).padding == "VALID"
    reason = TensorFlowBackend().supports(invalid, "cpu")
    assert reason is not None and "takes no explicit padding" in reason
    twin = make_case(id="t1d_outpad_twin", op="conv_transpose1d", in_channels=3, out_channels=3, input_size=3,
                     kernel_size=1, stride=2, padding=[[0, 1]], output_padding=1)
    assert nn_call(twin, True).padding == "SAME" and nn_call(twin, True).output_shape[-1] == 5
