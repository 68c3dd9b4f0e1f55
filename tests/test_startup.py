"""A run's start: which templates the `convdiff` command starts before importing the rest, and which templates
a run's workers may fork from (harness/commands/launch.py, harness/execution/preloads.py). Pure: no process."""

from __future__ import annotations

import pytest

from harness.commands.launch import early_backends, option
from harness.execution.preloads import common_start, preload, run_templates


def test_option_reads_both_spellings_and_the_last_wins():
    assert option(["run", "--backends", "torch"], "--backends") == "torch"
    assert option(["run", "--backends=a,b", "--backends", "c"], "--backends") == "c"
    assert option(["run", "--backends"], "--backends") is None


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "cases/conv2d.yaml", "--backends", "torch"], ["torch"]),
    (["run", "--backends", "torch, mutant:flip_kernel,torch"], ["torch", "mutant:flip_kernel"]),
    (["run", "--backends", "torch", "--device", "cuda"], []),       # a CUDA worker may have to start fresh
    (["run", "--backends", "myflip:Flipped"], []),                   # a module:Class registers itself in cli
    (["run", "--backends", "name=backends.torch.eager:TorchBackend"], []),
    (["run", "--backends", "no-such-backend"], []),                  # cli's usage error, after its own parse
    (["run", "cases"], []),                                          # every installed backend: not before the cases load
    (["validate", "--backends", "torch"], []),
    (["run", "--backends", "torch", "--help"], []),
])
def test_early_backends(argv, expected):
    assert early_backends(argv) == expected


def test_a_run_forks_from_its_own_templates_and_what_two_of_them_share():
    alone = run_templates(["torch"])
    assert alone == [preload("torch")]
    pair = run_templates(["torch-inductor", "torch-onnx-ort"])
    shared = common_start(preload("torch-inductor"), preload("torch-onnx-ort"))
    assert shared and shared[0] == "torch" and pair[-1] == shared  # both fork from the template of their common start
    # a common start of blocked packages alone imports nothing: no template for it
    assert all(any(not m.startswith("-") for m in t) for t in run_templates(["tensorflow", "litert", "tf2onnx-ort"]))


@pytest.mark.parametrize("gradients", [True, False])
def test_only_a_run_that_differentiates_preloads_torchs_symbolic_shapes(gradients: bool) -> None:
    """torch.autograd.grad's first call imports torch.fx.experimental.symbolic_shapes (0.24 s): the torch template
    imports it where the run judges gradients; torch.ao shares torch's template either way, and inductor's (which
    imports it through dynamo in any run) still begins with torch's, so it forks from it."""
    from harness.execution import preloads

    try:
        preloads.for_gradients(gradients)
        torch = preload("torch")
        assert ("torch.fx.experimental.symbolic_shapes" in torch) is gradients and torch[0] == "torch"
        assert preload("torch-ao-onednn") == torch
        inductor = preload("torch-inductor")
        assert inductor[:len(torch)] == torch and "torch.fx.experimental.symbolic_shapes" in inductor
    finally:
        preloads.for_gradients(True)


def test_the_early_start_reads_gradients_as_argparse_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """launch.main decides the templates' gradient modules from the command line before cli parses it: --gradients
    and an abbreviation of it (which argparse accepts) both count, other options do not."""
    from harness.commands import launch
    from harness.execution import preloads

    seen: list[bool] = []
    monkeypatch.setattr(preloads, "for_gradients", seen.append)
    monkeypatch.setattr(preloads, "prestart", lambda backends: None)
    monkeypatch.setattr("harness.commands.cli.main", lambda argv: 0)
    for argv, wanted in ((["run", "--backends", "torch", "--gradients"], True), (["run", "--backends", "torch", "--grad"], True),
                         (["run", "--backends", "torch"], False), (["run", "--backends", "torch", "--tier", "full"], False)):
        seen.clear()
        assert launch.main(argv) == 0
        assert seen == [wanted], argv
