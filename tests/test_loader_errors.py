"""Malformed case files: each gives exactly one line `path:line: field: problem`, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from harness.commands.cli import main

GOOD = """\
  - id: ok
    op: conv2d
    in_channels: 2
    out_channels: 2
    input_size: 5
    kernel_size: 3
"""

# (name, file text, expected "line: field: problem" after the path)
MALFORMED = [
    ("yaml_syntax", "cases:\n  - id: a\n    op: [conv2d\n", "4: yaml: expected ',' or ']', but got '<stream end>'"),
    ("tab_indent", "cases:\n\t- id: a\n", "2: yaml: found character '\\t' that cannot start any token"),
    ("empty_file", "", "1: file: empty file"),
    ("top_is_list", "- id: a\n", "1: file: must be a mapping with a 'cases' list"),
    ("unknown_top_key", "cases: []\nversion: 2\n", "2: version: unknown top-level key (expected defaults, cases)"),
    ("missing_cases", "defaults:\n  op: conv2d\n", "1: cases: required field is missing"),
    ("empty_cases", "cases: []\n", "1: cases: must be a non-empty list"),
    ("case_not_mapping", "cases:\n  - conv2d\n", "2: cases: each case must be a mapping"),
    ("duplicate_key", "cases:\n  - id: a\n    id: b\n", "3: id: duplicate key"),
    ("missing_required", "cases:\n  - id: a\n    op: conv2d\n    in_channels: 2\n    out_channels: 2\n    input_size: 5\n",
     "2: kernel_size: required field is missing"),
    ("unknown_field", GOOD.replace("    kernel_size: 3\n", "    kernel_size: 3\n    kernal: 3\n").join(["cases:\n", ""]),
     "8: kernal: unknown field"),
    ("bad_id", "cases:\n" + GOOD.replace("id: ok", "id: Bad-Id"), "2: id: must match [a-z0-9_]+, got 'Bad-Id'"),
    ("unknown_op", "cases:\n" + GOOD.replace("op: conv2d", "op: conv4d"),
     "3: op: must be one of: 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d'; got 'conv4d'"),
    ("zero_channels", "cases:\n" + GOOD.replace("in_channels: 2", "in_channels: 0"), "4: in_channels: must be >= 1, got 0"),
    ("string_channels", "cases:\n" + GOOD.replace("in_channels: 2", "in_channels: '2'"), "4: in_channels: must be an integer"),
    ("bool_batch", "cases:\n" + GOOD + "    batch: true\n", "8: batch: must be an integer"),
    ("negative_padding", "cases:\n" + GOOD + "    padding: -1\n", "8: padding: must be >= 0, got -1 (mark the case 'expect: invalid' if that is the point)"),
    ("bad_padding_word", "cases:\n" + GOOD + "    padding: full\n",
     "8: padding: must be an integer, a list, a list of [before, after] pairs, 'same' or 'valid', got 'full'"),
    ("bad_pair", "cases:\n" + GOOD + "    padding: [[1, 2, 3], [0, 0]]\n",
     "8: padding: each [before, after] pair must be two integers, got [1, 2, 3]"),
    ("pairs_wrong_rank", "cases:\n" + GOOD + "    padding: [[1, 2]]\n", "8: padding: expected 2 [before, after] pairs for conv2d, got 1"),
    ("kernel_wrong_rank", "cases:\n" + GOOD.replace("kernel_size: 3", "kernel_size: [3, 3, 3]"),
     "7: kernel_size: expected 2 values for conv2d, got 3"),
    ("empty_list", "cases:\n" + GOOD.replace("input_size: 5", "input_size: []"), "6: input_size: must not be an empty list"),
    ("zero_stride", "cases:\n" + GOOD + "    stride: [1, 0]\n", "8: stride: must be >= 1, got 0 (mark the case 'expect: invalid' if that is the point)"),
    ("float_kernel", "cases:\n" + GOOD.replace("kernel_size: 3", "kernel_size: 2.5"),
     "7: kernel_size: must be an integer or a list of integers, got 2.5"),
    ("bad_dtype", "cases:\n" + GOOD + "    dtype: float8\n",
     "8: dtype: must be one of: 'float32', 'float64', 'float16', 'bfloat16', 'uint8', 'int8'; got 'float8'"),
    ("bad_layout", "cases:\n" + GOOD + "    layout: NHWC\n",
     "8: layout: must be one of: 'channels_first', 'channels_last'; got 'NHWC'"),
    ("bad_tier", "cases:\n" + GOOD + "    tier: nightly\n", "8: tier: must be one of: 'smoke', 'full'; got 'nightly'"),
    ("tags_not_list", "cases:\n" + GOOD + "    tags: padding\n", "8: tags: must be a list"),
    ("groups_not_dividing", "cases:\n" + GOOD.replace("in_channels: 2", "in_channels: 3") + "    groups: 2\n",
     "8: groups: 2 does not divide in_channels = 3 (mark the case 'expect: invalid' if that is the point)"),
    ("output_padding_forward", "cases:\n" + GOOD + "    stride: 2\n    output_padding: 1\n",
     "9: output_padding: only transposed convolutions take output_padding (conv2d does not)"),
    ("output_padding_forward_even_if_invalid_expected", "cases:\n" + GOOD + "    stride: 2\n    output_padding: 1\n    expect: invalid\n",
     "9: output_padding: only transposed convolutions take output_padding (conv2d does not)"),
    ("output_padding_too_big", "cases:\n" + GOOD.replace("op: conv2d", "op: conv_transpose2d") + "    stride: 2\n    output_padding: 2\n",
     "9: output_padding: must be < max(stride, dilation) = 2 in dim 0, got 2 (mark the case 'expect: invalid' if that is the point)"),
    ("output_too_small", "cases:\n" + GOOD.replace("kernel_size: 3", "kernel_size: 7"),
     "2: output size: would be -1 in dim 0 (must be >= 1) (mark the case 'expect: invalid' if that is the point)"),
    ("invalid_but_valid", "cases:\n" + GOOD + "    expect: invalid\n", "8: expect: is 'invalid' but the case is a valid convolution"),
    ("duplicate_id", "cases:\n" + GOOD + GOOD, "8: id: duplicate id 'ok' (first at line 2)"),
    ("duplicate_swept_id", "cases:\n" + GOOD + "    sweep:\n      stride: [1, 1]\n", "2: id: duplicate id 'ok[stride=1]' (first at line 2)"),
    ("sweep_unknown_field", "cases:\n" + GOOD + "    sweep:\n      strides: [1, 2]\n", "9: sweep.strides: not a sweepable case field"),
    ("sweep_not_list", "cases:\n" + GOOD + "    sweep:\n      stride: 2\n", "9: sweep.stride: must be a non-empty list of values"),
    ("sweep_bad_value", "cases:\n" + GOOD + "    sweep:\n      stride: [1, -2]\n", "9: stride: must be >= 1, got -2 (mark the case 'expect: invalid' if that is the point)"),
    ("defaults_unknown", "defaults:\n  kernal: 3\ncases:\n" + GOOD, "2: defaults.kernal: unknown field"),
    ("defaults_id", "defaults:\n  id: x\ncases:\n" + GOOD, "2: defaults.id: not allowed in defaults"),
    ("defaults_bad_value", "defaults:\n  dilation: 0\ncases:\n" + GOOD, "2: dilation: must be >= 1, got 0 (mark the case 'expect: invalid' if that is the point)"),
    ("non_string_key", "cases:\n  - 3: a\n", "2: 3: keys must be strings"),
    ("control_character", "cases:\n  - id: a\x01\n", "2: yaml: unacceptable character #x0001: control characters are not allowed"),
]


@pytest.mark.parametrize("name,text,expected", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_gives_one_line(tmp_path, capsys, name, text, expected):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"{path}:{expected}\n"


def test_many_distinct_malformed_files():
    assert len({m[0] for m in MALFORMED}) >= 25


def test_no_traceback_and_exit_2_in_a_real_process(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent("cases:\n" + GOOD + "    padding: full\n"))
    proc = subprocess.run([sys.executable, "-m", "harness.commands.cli", "validate", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"{path}:8: padding:")


def test_missing_file(tmp_path, capsys):
    path = tmp_path / "nope.yaml"
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == f"{path}:0: file: no such file or directory\n"
