"""The JAX adapter: its translation (hand-derived), real runs against the float64 oracle, the
known divergence on the failing side, and the live host facts and fingerprint.

Every run goes through real isolated workers (JAX never loads in the test process).
"""

from __future__ import annotations

import os

import pytest

from backends.jax.eager import JaxBackend, conv_decision, lax_call
from harness.execution import host
from harness.execution.pool import Worker
from harness.execution.records import Record
from harness.model.case import Case
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_jax_backend")


def _case(**f) -> Case:
    base = {"id": "c", "in_channels": 4, "out_channels": 6, "kernel_size": 3, "bias": True}
    return make_case(**{**base, **f})


# --- translation: what a user would write, derived by hand ------------------------------------
def test_conv_channels_last_asymmetric_grouped_is_one_native_call():
    c = _case(op="conv2d", input_size=[7, 8], stride=[2, 1], padding=[[2, 1], [0, 1]], groups=2,
              layout="channels_last")
    call = lax_call(c)
    assert call.lines(True) == [
        "y = jax.lax.conv_general_dilated(x, w, window_strides=(2, 1), padding=((2, 1), (0, 1)), "
        "rhs_dilation=(1, 1), dimension_numbers=('NHWC', 'OIHW', 'NHWC'), feature_group_count=2)",
        "y = y + b",
    ]
    assert call.notes == []


def test_conv_same_and_valid_are_lax_strings():
    assert lax_call(_case(op="conv3d", input_size=5, stride=2, padding="same")).kwargs["padding"] == "SAME"
    assert lax_call(_case(op="conv1d", input_size=5, padding="valid")).kwargs["padding"] == "VALID"


def test_transpose_output_padding_folds_into_forward_padding():
    # PyTorch padding 1, output_padding 1: the forward-conv padding after is 1 - 1 = 0.
    c = _case(op="conv_transpose1d", input_size=5, stride=2, padding=1, output_padding=1)
    call = lax_call(c)
    assert call.fn == "conv_transpose"
    assert call.lines(True) == [
        "y = jax.lax.conv_transpose(x, w, strides=(2,), padding=((1, 0),), rhs_dilation=(1,), "
        "dimension_numbers=('NCW', 'OIW', 'NCW'), transpose_kernel=True, use_consistent_padding=True)",
        "y = y + b[:, None]",
    ]
    assert any("output_padding" in n for n in call.notes)


def test_transpose_same_is_native_and_short_kernel_valid_is_explicit():
    same = lax_call(_case(op="conv_transpose3d", input_size=3, kernel_size=2, stride=3, padding="same"))
    assert same.kwargs["padding"] == "SAME" and same.notes == []
    assert lax_call(_case(op="conv_transpose1d", input_size=4, stride=2, padding="valid")).kwargs["padding"] == "VALID"
    # k=2 < s=3: JAX's VALID would give L*s = 12, the canonical VALID (L-1)*s + k = 11
    short = lax_call(_case(op="conv_transpose1d", input_size=4, kernel_size=2, stride=3, padding="valid"))
    assert short.kwargs["padding"] == ((0, 0),) and "VALID" in short.notes[0]


def test_grouped_transpose_is_lhs_dilated_grouped_conv():
    # k=3, d=2 -> dilated kernel 5; padding (1, 1), output_padding 1 -> lax pads (5-1-1, 5-1-1+1) = (3, 4)
    c = _case(op="conv_transpose1d", in_channels=4, out_channels=6, groups=2, input_size=5, stride=2,
              dilation=2, padding=1, output_padding=1)
    call = lax_call(c)
    assert call.fn == "conv_general_dilated"
    assert call.kwargs["padding"] == ((3, 4),) and call.kwargs["lhs_dilation"] == (2,)
    assert call.kwargs["feature_group_count"] == 2 and call.regroup == (2, 2, 3)
    assert call.lines(False)[:3] == [
        "w = w.reshape(2, 2, 3, *w.shape[2:])  # (g, C_in/g, C_out/g, *k)",
        "w = jnp.swapaxes(w, 1, 2).reshape(6, 2, *w.shape[3:])  # (C_out, C_in/g, *k)",
        "w = jnp.flip(w, axis=(2,))",
    ]


def test_invalid_output_padding_cannot_be_posed():
    c = make_case(id="op_big", op="conv_transpose1d", in_channels=2, out_channels=2, input_size=5,
                  kernel_size=3, stride=2, output_padding=2, expect="invalid")
    assert "no output_padding" in JaxBackend().supports(c, "cpu")
    assert JaxBackend().supports(_case(op="conv_transpose1d", input_size=5, dilation=3, output_padding=2), "cpu") is None


def test_conv_decision_reads_optimized_hlo():
    """Hand-written HLO lines as XLA prints them: its own convolution, a library call, and neither."""
    assert conv_decision("%c = f32[1,8,8,4]{3,2,1,0} convolution(%a, %b), window={size=3x3}") == \
        ("f32", "hlo-convolution")
    cudnn = '%cc = (f16[1,4,8,8]{3,2,1,0}, u8[0]{0}) custom-call(%a, %b), custom_call_target="__cudnn$convForward"'
    assert conv_decision(cudnn) == ("f16", "__cudnn$convForward")
    other = '%t = f32[2]{0} custom-call(%a), custom_call_target="foo", metadata={op_name="conv_general_dilated"}'
    assert conv_decision(other) == ("none", "none")


# --- real runs against the oracle ----------------------------------------------------------------
PASSING: dict[str, dict] = {
    "c1_causal_groups": dict(op="conv1d", in_channels=6, groups=3, input_size=9, padding=[[4, 0]], dilation=2),
    "c2_last_asym_s2": dict(op="conv2d", input_size=[7, 8], stride=[2, 1], padding=[[2, 1], [0, 1]],
                            layout="channels_last"),
    "c2_depthwise_same": dict(op="conv2d", in_channels=6, out_channels=6, groups=6, input_size=7, stride=2,
                              padding="same"),
    "c3_f64_valid": dict(op="conv3d", input_size=[4, 5, 6], padding="valid", dtype="float64"),
    "c2_bf16": dict(op="conv2d", input_size=6, padding=1, dtype="bfloat16"),
    "c2_f16_last": dict(op="conv2d", input_size=6, padding=1, dtype="float16", layout="channels_last"),
    "t1d_outpad_dil": dict(op="conv_transpose1d", input_size=5, stride=1, dilation=3, padding=1, output_padding=2),
    "t2d_zero_fill_seed": dict(op="conv_transpose2d", in_channels=1, out_channels=1, input_size=[2, 3],
                               kernel_size=2, stride=[2, 1], padding=1, output_padding=[1, 0], data="integers"),
    "t2d_last_asym": dict(op="conv_transpose2d", input_size=[4, 5], stride=2, padding=[[2, 0], [1, 2]],
                          layout="channels_last"),
    "t3d_same_short_k": dict(op="conv_transpose3d", input_size=3, kernel_size=2, stride=3, padding="same"),
    "t1d_valid_short_k": dict(op="conv_transpose1d", input_size=4, kernel_size=2, stride=3, padding="valid"),
    "t2d_grouped_outpad": dict(op="conv_transpose2d", in_channels=4, out_channels=6, groups=2, input_size=4,
                               stride=2, padding=1, output_padding=1, dilation=[1, 2]),
    "t3d_grouped_last_bf16": dict(op="conv_transpose3d", in_channels=4, out_channels=4, groups=4, input_size=3,
                                  stride=2, layout="channels_last", dtype="bfloat16"),
    "t1d_grouped_same": dict(op="conv_transpose1d", in_channels=6, out_channels=3, groups=3, input_size=7,
                             stride=2, padding="same"),
}
GRADIENTS = ("c1_causal_groups", "c2_last_asym_s2", "t2d_zero_fill_seed", "t2d_grouped_outpad", "t1d_grouped_same")
KNOWN = {
    "kernel_larger_than_input": dict(op="conv1d", input_size=4, kernel_size=7, expect="invalid"),
    "output_padding_too_large": dict(op="conv_transpose1d", input_size=9, stride=2, output_padding=2,
                                     expect="invalid"),
}


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], Record]:
    cases = [_case(id=cid, gradients=cid in GRADIENTS, **f) for cid, f in PASSING.items()]
    cases += [_case(id=cid, **f) for cid, f in KNOWN.items()]
    return {(r.case_id, r.output): r for r in run_on(cases, ["jax"], timeout=120.0, known=True)}


@pytest.mark.parametrize("cid", PASSING)
def test_passes_against_the_oracle(results, cid):
    rec = results[(cid, "out")]
    assert rec.status == "pass", (rec.message, rec.translation)
    assert 0 <= rec.bound_ratio <= 1
    want = "conv_transpose(" if PASSING[cid]["op"].startswith("conv_transpose") and "groups" not in PASSING[cid] \
        else "conv_general_dilated("
    assert want in rec.translation


@pytest.mark.parametrize("cid", GRADIENTS)
def test_vjp_gradients_pass(results, cid):
    for name in ("grad_input", "grad_weight", "grad_bias"):
        rec = results[(cid, name)]
        assert rec.status == "pass", (name, rec.message)
        assert "jax.vjp(f, x, w, b)" in rec.translation


def test_grouped_transpose_says_its_identity(results):
    assert "# exact identity: grouped transpose" in results[("t2d_grouped_outpad", "out")].translation


def test_empty_output_is_the_known_divergence(results):
    rec = results[("kernel_larger_than_input", "out")]
    assert rec.status == "accepted_invalid" and "(1, 6, 0)" in rec.message
    assert rec.known_issue == "jax-conv-empty-output" and not rec.unexpected


def test_invalid_output_padding_is_unsupported_with_reason(results):
    rec = results[("output_padding_too_large", "out")]
    assert rec.status == "unsupported" and "no output_padding" in rec.message


# --- what the worker reports ---------------------------------------------------------------------------
def _worker(env: dict[str, str], cpus: set[int] | None = None) -> Worker:
    """A started jax worker, launched with `env` set and (optionally) this process's CPUs narrowed."""
    saved_env = {k: os.environ.get(k) for k in env}
    saved_cpus = os.sched_getaffinity(0)
    os.environ.update(env)
    try:
        if cpus:
            os.sched_setaffinity(0, cpus)
        w = Worker("jax", "cpu")
        if not w.ready():
            pytest.skip(f"jax: {w.reason}")
        return w
    finally:
        os.sched_setaffinity(0, saved_cpus)
        for k, v in saved_env.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def test_host_facts_are_xla_decisions_read_live():
    """XLA sizes its CPU pool from the CPUs the process may use: one allowed CPU, one pool thread."""
    one = {min(os.sched_getaffinity(0))}
    w = _worker({}, cpus=one)
    try:
        facts = w.host
    finally:
        w.stop()
    assert facts["jax_threads"] == 1
    assert set(facts) <= set(host.FACTS)
    assert facts["jax_f32_conv_dtype"] == "f32"  # float32 is never narrowed
    assert all(isinstance(facts[f"jax_{d}_conv_dtype"], str) for d in ("f16", "bf16"))


def test_fingerprint_records_the_default_precision():
    """JAX_DEFAULT_MATMUL_PRECISION is jax's documented switch; the fingerprint shows jax's own reading."""
    w = _worker({"JAX_DEFAULT_MATMUL_PRECISION": "highest"})
    try:
        fp = w.fingerprint
    finally:
        w.stop()
    assert fp["default_matmul_precision"] == "highest"
    assert fp["platform"] == "cpu" and fp["x64"] == "True"
