"""`convdiff validate FILE` on a known-issues file: recognised by its shape, every problem one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.registry import PLUGINS_ENV, real_backends
from harness.commands.cli import main
from harness.commands.validate import lint_known_issues, unknown_names
from harness.judge.known_issues import project_known_issues

BAD = """\
issues:
  - id: ours-a
    backend: myrt
    cases: {op: conv2d, when: "any(k > s for k, s in zip(kernal_size, stride)) and out_size[0] > 1"}
    status: mismatch
    reason: r
    link: none
  - id: ours-a
    backend: [tourch, "torch-ao-*", "mutant:flip_kernal", "fault:*"]
    device: gpu
    cases: {groupz: 2}
    status: mismatch
    reason: r
    link: none
  - id: ours-b
    backend: torch
    host: {tf_onednnn: true}
    status: crash
    reason: r
    link: none
  - id: ours-c
    backend: "onnx*"
    cases: {when: "dilation[0] >"}
    status: mismatched
    reason: r
    link: none
"""


def test_a_bad_known_issues_file_gives_every_problem_as_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ours.yaml").write_text(BAD)
    assert main(["validate", str(tmp_path / "ours.yaml")]) == 2
    lines = capsys.readouterr().err.splitlines()
    path = str(tmp_path / "ours.yaml")
    want = [
        (3, "backend: unknown backend 'myrt': no registered backend matches it"),
        (4, "cases.when: unknown name 'kernal_size'"),
        (8, "id: duplicate id 'ours-a' (first at line 2)"),
        (9, "backend: unknown backend 'tourch' (did you mean 'torch'?)"),
        (9, "backend: unknown mutant 'flip_kernal'"),
        (10, "device: unknown device 'gpu' (cpu or cuda)"),
        (11, "cases.groupz: unknown selector field"),
        (17, "host.tf_onednnn: unknown host fact"),
        (24, "status: unknown status 'mismatched'"),  # the schema's first problem in that entry
    ]
    assert len(lines) == len(want), lines
    for line, (n, text) in zip(lines, want):
        assert line.startswith(f"{path}:{n}: {text}"), (line, n, text)


def test_a_one_off_adapter_is_named_with_backends(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    good = BAD.split("  - id: ours-a\n    backend: [")[0]  # the first entry only
    (tmp_path / "ours.yaml").write_text(good.replace("kernal_size", "kernel_size"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(PLUGINS_ENV, "")  # restored after the test: --backends registers the one-off there
    assert main(["validate", "ours.yaml"]) == 2
    # any importable adapter class under a name of its own, as a one-off adapter is named on the command line
    assert main(["validate", "ours.yaml", "--backends", "myrt=backends.torch.eager:TorchBackend"]) == 0
    assert "ours.yaml: 1 known issues" in capsys.readouterr().out


def test_when_names_are_the_parameters_derived_names_and_its_own() -> None:
    assert unknown_names("any(n % s for n, s in zip(input_size, stride)) and acc_len > 9") == []
    assert unknown_names("kernal_size[0] > stride[0] or foo") == ["kernal_size", "foo"]


def test_convdiffs_own_database_passes_its_lint() -> None:
    path = project_known_issues()
    assert path is not None
    assert [str(p) for p in lint_known_issues(str(path), real_backends())] == []
