"""Minimizing each mutant's first failure gives a case no larger than DOMAIN.md's seed examples."""

from __future__ import annotations

import pytest

from backends.testing.grad_mutants import GRAD_MUTANTS
from backends.testing.mutants import MUTANTS
from harness.commands.minimize import Probe, case_size, minimal_id, minimize, write_outputs
from harness.model.loader import load_file

from .helpers import make_case

SEED_FILE = "cases/bug_classes.yaml"
# DOMAIN.md's zero-fill example: input 1x1x2x3, kernel 2x2 -> 6 + 4 elements
DOMAIN_SEED = make_case(id="seed", op="conv_transpose2d", in_channels=1, out_channels=1, input_size=[2, 3],
                        kernel_size=[2, 2], stride=[2, 1], padding=[1, 1], output_padding=[1, 0])


def seed_size(bug: str) -> int:
    """The smallest seed case of that class in the seed file (tagged `seed` and the class)."""
    sizes = [case_size(c) for c in load_file(SEED_FILE) if bug in c.tags and "seed" in c.tags]
    assert sizes, f"no seed case for {bug} in {SEED_FILE}"
    return min(sizes)


@pytest.mark.slow
@pytest.mark.parametrize("bug", [b for b in MUTANTS if b not in GRAD_MUTANTS])  # gradients: test_gradients.py
def test_minimized_first_failure_is_no_larger_than_the_seed(bug, tmp_path):
    backend = f"mutant:{bug}"
    probe = Probe(backend, "cpu", timeout=60.0)  # one warm worker: the search and the minimization share it
    try:
        first = next((c for c in load_file(SEED_FILE) if probe.run(c).status in ("mismatch", "shape_mismatch")), None)
        assert first is not None, f"{backend} fails no seed case"
        result = minimize(first, backend, probe=probe)
    finally:
        probe.stop()
    assert result.record.status in ("mismatch", "shape_mismatch")
    assert result.record.diagnosis == bug
    # int16 pair saturation needs pairs of large products: its seed, not DOMAIN.md's 10 elements, is the bar
    bar = seed_size(bug) if bug == "quant_int16_pair_saturation" else min(seed_size(bug), case_size(DOMAIN_SEED))
    assert case_size(result.case) <= bar
    assert result.tried < 200
    written = write_outputs(result, tmp_path)
    (case,) = load_file(written[0])  # a valid case file with the same case
    assert case.id == minimal_id(first.id) and case_size(case) == case_size(result.case)
    # the standalone reproducer; none for the doubles that rewrite the epilogue outside torch, nor for the
    # quantized doubles (`convdiff repro` says why)
    if bug not in ("epilogue_dropped", "epilogue_fold_wrong_axis") and not case.quantized:
        assert any(p.suffix == ".py" for p in written)


def test_minimal_id_is_a_valid_case_id_even_for_swept_cases():
    assert minimal_id("same_t1d_dilated[stride=2,padding=1:0]") == "same_t1d_dilated_stride_2_padding_1_0_min"


def test_minimizer_does_not_drift_onto_a_known_issue(tmp_path):
    """A failure no known issue explains is shrunk only through candidates that stay unexplained: with an
    entry that explains the mutant's failure at one input channel, the minimized case keeps two or more
    (without the entries, the same search reaches one channel: the drift this guards against)."""
    from harness.judge.known_issues import load_known_issues

    (tmp_path / "known_issues.yaml").write_text(
        "issues:\n"
        "  - id: explains-one-channel\n"
        "    backend: 'mutant:ignore_output_padding'\n"
        "    cases: {in_channels: 1}\n"
        "    status: [mismatch, shape_mismatch]\n"
        "    reason: a stand-in for a known issue that covers the smaller cases\n"
        "    link: none found\n")
    known = load_known_issues(tmp_path / "known_issues.yaml")
    seed = make_case(id="seed3", op="conv_transpose2d", in_channels=3, out_channels=2, input_size=[2, 3],
                     kernel_size=[2, 2], stride=[2, 1], padding=[1, 1], output_padding=[1, 0])
    probe = Probe("mutant:ignore_output_padding", "cpu", timeout=60.0)
    try:
        drifted = minimize(seed, probe.backend, probe=probe)
        kept = minimize(seed, probe.backend, probe=probe, known=known)
    finally:
        probe.stop()
    assert drifted.case.in_channels == 1  # the entry would explain it: another finding than the seed's
    assert kept.case.in_channels >= 2 and kept.record.unexpected and kept.record.known_issue is None
    assert kept.record.status == drifted.record.status and kept.record.diagnosis == "ignore_output_padding"
