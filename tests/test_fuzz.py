"""`convdiff fuzz` end to end with mutant backends: each seeded bug is caught, named, minimized and
written down under --out (case file that loads, known-issue stub that loads, upstream-ready report),
never into the corpus named by --write (a mutant's finding is no divergence), while plain torch gives
no new finding; the outputs are the ones `convdiff run` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.commands.cli import main
from harness.commands.fuzz.campaign import GRADIENT_SHARE, INVALID_RATE
from harness.commands.fuzz.findings import check_summaries
from harness.commands.fuzz.gen import config_at
from harness.execution.records import read_records
from harness.judge.known_issues import load_known_issues
from harness.model.loader import load_file

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_fuzz")

MUTANTS = ("flip_kernel", "ignore_output_padding", "swap_transpose_weight_axes")
SEED, CASES = 4, 24  # a seed whose first cases hold transposed ones with output_padding and in != out channels


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("fuzz")
    backends = ",".join(["torch", *(f"mutant:{m}" for m in MUTANTS)])
    status = main(["fuzz", "--backends", backends, "--cases", str(CASES), "--seed", str(SEED), "--out", str(out),
                   "--write", str(out / "corpus" / "fuzz-test.yaml"), "--minimize-budget", "40"])
    return out, status


def test_outputs_like_convdiff_run(run: tuple[Path, int]) -> None:
    out, status = run
    assert status == 1  # new findings
    summary = json.loads((out / "summary.json").read_text())
    records = read_records([out / "results.jsonl"])
    assert summary["total"] == len(records) > 0
    assert (out / "junit.xml").exists()
    assert "Fuzz: known vs new signatures" in (out / "report.html").read_text()
    # the cases that ran are the generator's, in order, with the neighbours of failures between them (steer.py:
    # ids fuzz_<seed>_n<k>), and load as a case file
    ran = load_file(out / "fuzz-cases.yaml")
    assert len(ran) == summary["fuzz"]["cases_run"] == CASES
    base = [c.id for c in ran if "_n" not in c.id.removeprefix(f"fuzz_{SEED}")]
    expected = [config_at(SEED, i, INVALID_RATE, GRADIENT_SHARE) for i in range(60)]
    assert base == [c.case.id for c in expected if c.case is not None][:len(base)]
    assert all(c.tags[-1] == "near" for c in ran if c.id not in base)


def test_every_mutant_caught_and_torch_clean(run: tuple[Path, int]) -> None:
    out, _ = run
    section = json.loads((out / "summary.json").read_text())["fuzz"]
    new = section["new_signatures"]
    for m in MUTANTS:
        assert any(n["backend"] == f"mutant:{m}" and n["diagnosis"] == m for n in new), (m, new)
    assert not [n for n in new if n["backend"] == "torch"]


def test_findings_written_and_valid(run: tuple[Path, int]) -> None:
    out, _ = run
    assert not (out / "corpus").exists()  # --write takes real backends' findings only
    found = next((out / "found").glob("fuzz-*.yaml"))
    cases = load_file(found)
    assert cases and all(c.id.endswith("_min") for c in cases)
    text = found.read_text()
    assert text.count("  # mutant:") >= len(cases)  # a comment naming backend, status, diagnosis
    stub = load_known_issues(found.with_name(found.name.removesuffix(".yaml") + ".known-issues-stub.yml"))
    assert {e.status[0] for e in stub.entries} <= {"mismatch", "shape_mismatch", "accepted_invalid", "rejected"}
    section = json.loads((out / "summary.json").read_text())["fuzz"]
    written = [n for n in section["new_signatures"] if "minimal_case" in n]
    assert written
    for n in written:
        case = next(c for c in cases if c.id == n["minimal_case"])
        # the minimal case still shows the bug on its backend, and stubs select it
        assert n["replays"] == n["status"]
        assert any(e.matches(case, n["backend"], "cpu") for e in stub.entries)
        md = Path(n["report"]).read_text()
        for heading in ("# ", "**Framework:**", "**Host:**", "## Minimal case", "## Reproducer",
                        "## Observed vs expected", "## Other implementations on the same case"):
            assert heading in md
        if n["status"] == "mismatch":
            assert "Worst element" in md and "allowed" in md
        assert "| torch |" in md


def test_stub_selectors_state_the_inferred_rule(run: tuple[Path, int]) -> None:
    """Where a signature failed often enough to infer its rule, the stub's `when` is that rule, not the minimal
    case's literal values: ignore_output_padding is wrong exactly when an output_padding is positive (the
    mutant's definition), and its inferred stub agrees with that on every valid case of its op that ran."""
    out, _ = run
    found = next((out / "found").glob("fuzz-*.yaml"))
    stub = load_known_issues(found.with_name(found.name.removesuffix(".yaml") + ".known-issues-stub.yml"))
    inferred = [e for e in stub.entries if e.backend == ["mutant:ignore_output_padding"] and "when" in e.cases]
    if not inferred:  # how many failures a signature gathers depends on the steered draws, paced by the clock
        pytest.skip("no ignore_output_padding signature gathered the 3 failures a rule is inferred from: "
                    + "; ".join(str(e.cases) for e in stub.entries))
    ran = [c for c in load_file(out / "fuzz-cases.yaml") if c.expect == "valid"]
    for e in inferred:
        ops = e.cases.get("op")
        mine = [c for c in ran if ops is None or c.op in ([ops] if isinstance(ops, str) else ops)]
        assert mine
        for c in mine:
            assert e.matches(c, "mutant:ignore_output_padding", "cpu") == any(p > 0 for p in c.output_padding), (
                e.cases, c.id, c.output_padding)


def test_nightly_check_fails_on_new_signatures(run: tuple[Path, int], tmp_path: Path) -> None:
    out, _ = run
    assert check_summaries([str(out / "summary.json")]) == 1
    clean = tmp_path / "summary.json"
    clean.write_text(json.dumps({"fuzz": {"new_signatures": []}}))
    assert check_summaries([str(clean)]) == 0


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--backends", "nope"]) == 2
    assert main(["fuzz", "--cases", "0"]) == 2
    assert main(["fuzz", "--invalid-rate", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("convdiff: error:") == 3
