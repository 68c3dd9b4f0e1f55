"""`convdiff repro`: generated scripts, run alone, reach the harness's verdict (pass and failing cases)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.commands.cli import main
from harness.execution.records import Record
from harness.model.build import make_case
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import run_on, run_scripts

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro")

CASES = [
    make_case(id="cl_bias", op="conv2d", in_channels=4, out_channels=6, input_size=[7, 9], kernel_size=[3, 2],
              padding=[[1, 0], [0, 2]], bias=True, layout="channels_last", file="conv2d.yaml"),
    make_case(id="tr_groups", op="conv_transpose2d", in_channels=4, out_channels=6, input_size=[5, 4], kernel_size=3,
              stride=2, padding=1, output_padding=1, groups=2, bias=True, file="conv_transpose2d.yaml"),
    make_case(id="bf16_same", op="conv1d", in_channels=3, out_channels=2, input_size=11, kernel_size=4, stride=2,
              padding="same", dtype="bfloat16", file="conv1d.yaml"),
    make_case(id="int_exact", op="conv_transpose1d", in_channels=2, out_channels=3, input_size=6, kernel_size=3,
              padding="same", stride=3, data="integers", file="conv_transpose1d.yaml"),
    # one channel, channels-last: torch reads the layout off the strides of a size-1 axis (oneDNN's brgemm conv
    # is wrong on this shape on AVX-512 CPUs, right elsewhere); the script must build the tensor the adapter gets
    make_case(id="cl_one_channel", op="conv2d", in_channels=1, out_channels=2, input_size=[4, 1], kernel_size=[4, 2],
              stride=[1, 4], padding=1, batch=2, layout="channels_last", data="integers", file="found.yaml"),
]
BACKENDS = ["torch", "mutant:flip_kernel", "mutant:ignore_groups_in_transpose", "fault:nan"]


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return run_on(CASES, BACKENDS)


def run_script(script: str, tmp_path: Path, name: str) -> tuple[int, str]:
    path = tmp_path / f"{re.sub(r'[^a-z0-9_]+', '_', name)}.py"
    path.write_text(script)
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    statuses = {r.status for r in records}
    assert {"pass", "mismatch", "shape_mismatch"} <= statuses, statuses
    chosen = [r for r in records if r.backend in ("torch", "fault:nan")]
    chosen += [r for r in records if r.backend.startswith("mutant:") and r.status != "pass"]
    scripts = [script_for(rec) for rec in chosen]
    for script in scripts:
        imports = [ln for ln in script.splitlines() if re.match(r"\s*(import|from) ", ln)]
        assert not any(re.search(r"\b(harness|backends|reports|convdiff|ml_dtypes)\b", ln) for ln in imports), imports
    for rec, (rc, out) in zip(chosen, run_scripts(chosen, scripts, tmp_path)):
        verdict = re.findall(r"^verdict: (\w+)$", out, re.M)
        assert verdict == [rec.status], f"{rec.case_id} on {rec.backend}: harness {rec.status}, script:\n{out}"
        assert rc == (0 if rec.status == "pass" else 1)
        # where oneDNN gets cl_one_channel wrong, part of what it returns is memory it never wrote: only the
        # verdict repeats
        unstable = rec.case_id == "cl_one_channel" and rec.status == "mismatch"
        if rec.bound_ratio is not None and rec.status != "shape_mismatch" and not unstable:
            got = float(re.search(r"error/bound = (\S+) at", out).group(1))
            assert got == pytest.approx(rec.bound_ratio, rel=1e-5, abs=1e-12), out


def test_cli_repro_prints_a_script(records: list[Record], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text("".join(r.to_json() + "\n" for r in records))
    assert main(["repro", "conv2d.yaml::cl_bias", "--backend", "mutant:flip_kernel", "--results", str(results)]) == 0
    out = capsys.readouterr()
    assert "def run_framework" in out.out and "w = w.flip([2, 3])  # mutant:flip_kernel" in out.out
    assert "mismatch" in out.err
    assert main(["repro", "nosuch", "--backend", "torch", "--results", str(results)]) == 2
    assert main(["repro", "cl_bias", "--backend", "nosuch"]) == 2


def test_no_template_is_a_clear_error(records: list[Record]) -> None:
    rec = Record(**{**records[0].__dict__, "backend": "someframework"})
    with pytest.raises(ReproUnavailable, match="no reproducer template for backend 'someframework'"):
        script_for(rec)


def test_params_that_make_no_case_leave_that_result_without_a_script(records: list[Record]) -> None:
    """A record whose params no longer build a case (here an output length of -1, input 5, kernel 3, dilation 3,
    labelled valid) has no script: a clear ReproUnavailable, which the report takes as "no script" for it alone."""
    import dataclasses

    rec = next(r for r in records if r.backend == "torch")
    params = {**rec.params, "input_size": [5, 5], "kernel_size": [2, 3], "dilation": [3, 3], "stride": [1, 1],
              "padding": [[0, 0], [0, 0]], "expect": "valid"}
    with pytest.raises(ReproUnavailable, match="output size: would be -1"):
        script_for(dataclasses.replace(rec, params=params))


def test_cli_repro_runs_the_case_when_no_results_given(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cases = tmp_path / "tiny.yaml"
    cases.write_text("cases:\n  - {id: tiny, op: conv1d, in_channels: 2, out_channels: 2, input_size: 8, kernel_size: 3}\n")
    assert main(["repro", "tiny.yaml::tiny", "--backend", "torch", "--cases", str(cases)]) == 0
    script = capsys.readouterr().out
    rc, out = run_script(script, tmp_path, "tiny")
    assert rc == 0 and "verdict: pass" in out
