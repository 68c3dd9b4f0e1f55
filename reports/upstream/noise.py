"""Frameworks' start-up banners, left out of the snippet's output in an upstream report's body.

A snippet's output in the body is what it prints and what the framework says about the defect. Importing
TensorFlow, Paddle or PyTorch also prints lines that say nothing about it and change from run to run
(timestamps, thread ids). Those lines are the patterns below; each is anchored on the framework's own
wording, so a line that merely mentions one of these words (an error, a warning about the call itself) stays.
The details keep every script's output whole.

Known banners (2026-11-29: TensorFlow 2.21, LiteRT 2.3, Paddle 3.3.1, paddle2onnx 2.1, PyTorch 2.13):
- absl's "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR";
- TensorFlow's "oneDNN custom operations are on" (port.cc), cpu_feature_guard's "This TensorFlow binary is
  optimized ..." and its "To enable the following instructions: ..." continuation;
- the TFLite converter's progress lines (devices.cc eligible GPUs, single_machine.cc new session,
  tf_tfl_flatbuffer_helpers.cc ignored options, flatbuffer_export.cc op counts);
- Paddle's "No ccache found" UserWarning at import;
- paddle2onnx's "Static PaddlePaddle model will be deleted" notice;
- PyTorch's pytree FutureWarning about `LeafSpec` raised from copyreg while a program is exported.

A Python warning's line is followed by the source line that raised it (indented): that line goes with it.
"""

from __future__ import annotations

import re

_GLOG = r"^[IWEF]\d{4} [\d:.]+\s+\d+ "  # absl/glog's prefix: severity, date, time, thread id
BANNERS = tuple(re.compile(p) for p in (
    r"^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$",
    _GLOG + r"port\.cc:\d+\] oneDNN custom operations are on\.",
    _GLOG + r"cpu_feature_guard\.cc:\d+\] This TensorFlow binary is optimized to use available CPU instructions",
    r"^To enable the following instructions: .*rebuild TensorFlow with the appropriate compiler flags\.$",
    _GLOG + r"devices\.cc:\d+\] Number of eligible GPUs",
    _GLOG + r"single_machine\.cc:\d+\] Starting new session$",
    _GLOG + r"tf_tfl_flatbuffer_helpers\.cc:\d+\] Ignored (output_format|drop_control_dependency)\.$",
    _GLOG + r"flatbuffer_export\.cc:\d+\] Estimated count of arithmetic ops:",
    r"paddle/utils/cpp_extension/extension_utils\.py:\d+: UserWarning: No ccache found\.",
    r"\[WARNING\]\s+Static PaddlePaddle model will be deleted, if you want to keep it",
    r"copyreg\.py:\d+: FutureWarning: `isinstance\(treespec, LeafSpec\)` is deprecated",
))
_WARNING = re.compile(r"^\S+\.py:\d+: \w+Warning: ")  # a Python warning: its source line follows, indented


def is_banner(line: str) -> bool:
    return any(p.search(line) for p in BANNERS)


def without_banners(output: str) -> str:
    """The output with the known banners' lines left out (with the source line under a warning among them)."""
    kept: list[str] = []
    skip_source = False
    for line in output.splitlines(keepends=True):
        if skip_source and line.startswith("  "):
            skip_source = False
            continue
        skip_source = False
        if is_banner(line.rstrip("\n")):
            skip_source = bool(_WARNING.search(line))
            continue
        kept.append(line)
    return "".join(kept)
