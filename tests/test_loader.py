"""Case files load into canonical cases: defaults, sweeps, stable ids, tiers, geometry."""

from __future__ import annotations

from harness.model.loader import load_cases, load_file

TEXT = """\
defaults:
  op: conv_transpose2d
  in_channels: 2
  out_channels: 4
cases:
  - id: sweep_me
    input_size: [3, 4]
    kernel_size: 3
    tier: smoke
    sweep:
      kernel_size: [1, 3]
      stride: [1, [2, 1]]
  - id: pairs
    op: conv2d
    input_size: 5
    kernel_size: 2
    padding: [[1, 0], [0, 2]]
    tags: [a, b]
  - id: same_t
    input_size: 5
    kernel_size: 1
    stride: 3
    padding: same
  - id: bad_on_purpose
    input_size: 3
    kernel_size: 3
    stride: 2
    output_padding: 2
    expect: invalid
"""


def test_sweep_expansion_ids_and_order(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(TEXT)
    cases = load_file(p)
    ids = [c.id for c in cases]
    assert ids[:4] == ["sweep_me[kernel_size=1,stride=1]", "sweep_me[kernel_size=1,stride=2x1]",
                       "sweep_me[kernel_size=3,stride=1]", "sweep_me[kernel_size=3,stride=2x1]"]
    assert all(c.tier == "smoke" and c.op == "conv_transpose2d" for c in cases[:4])
    assert cases[1].stride == (2, 1) and cases[0].stride == (1, 1)
    assert len({c.seed for c in cases}) == len(cases)


def test_padding_pairs_and_tags(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(TEXT)
    pairs = load_file(p)[4]
    assert pairs.padding == ((1, 0), (0, 2)) and pairs.tags == ("a", "b")
    assert pairs.geometry.out_size == (5, 6)


def test_transposed_same_with_short_kernel_extends_the_tail(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(TEXT)
    c = load_file(p)[5]
    # F = (5-1)*3 + 1 = 13 < 15 = 5*3: two bias-only elements appended at the end
    assert c.geometry.out_size == (15, 15) and c.geometry.extend == (2, 2) and c.geometry.pads == ((0, 0), (0, 0))


def test_invalid_case_kept_without_geometry(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text(TEXT)
    c = load_file(p)[6]
    assert c.expect == "invalid" and c.geometry is None


def test_corpus_size_and_smoke_tier():
    cases = load_cases(["cases"])
    assert len(cases) >= 200
    smoke = [c for c in cases if c.tier == "smoke"]
    assert 25 <= len(smoke) <= 100
    assert {c.op for c in smoke} == {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}
    assert {c.dtype for c in cases} == {"float32", "float64", "float16", "bfloat16", "uint8", "int8"}


def test_a_file_is_parsed_once_per_text_and_again_once_edited(tmp_path, monkeypatch):
    """A session reads each case file and known_issues.yaml many times (yamlmap.parsed_once): the same text is
    parsed once, an edited file again, a bad file raises every time, and no caller's change reaches another."""
    import pytest

    from harness.model import loader
    from harness.model.yamlmap import InputError

    parsed = []
    real = loader._load_file
    monkeypatch.setattr(loader, "_load_file", lambda path, text: parsed.append(text) or real(path, text))
    f = tmp_path / "c.yaml"
    f.write_text(TEXT)
    first, again = load_file(f), load_file(f)
    assert len(parsed) == 1 and first == again and first is not again
    first.clear()
    assert load_file(f) == again
    f.write_text(TEXT.replace("in_channels: 2", "in_channels: 3"))
    assert len(parsed) == 1 and load_file(f)[0].in_channels == 3 and len(parsed) == 2
    f.write_text(TEXT + "  - nonsense\n")
    for _ in range(2):
        with pytest.raises(InputError):
            load_file(f)
    assert len(parsed) == 4
