"""Figures cached on disk (reports/svg_cache.py): a hit returns what drawing gives, new data draws again."""

from __future__ import annotations

from reports.drift_plot import drift_svgs
from reports.svg_cache import cached_svg

CURVES = [{"family": "f", "backend": "torch", "device": "cpu", "flagged": False,
           "points": [{"K": 9, "e": 0.5}, {"K": 81, "e": 1.5}]}]


def test_hit_is_the_drawing_and_other_data_draws_again(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    drawn: list[str] = []

    def draw(text: str):
        return lambda: drawn.append(text) or f"<svg>{text}</svg>"

    assert cached_svg("k", '{"a": 1}', draw("one")) == "<svg>one</svg>"
    assert cached_svg("k", '{"a": 1}', draw("two")) == "<svg>one</svg>"  # from disk: not drawn again
    assert cached_svg("k", '{"a": 2}', draw("three")) == "<svg>three</svg>"
    assert cached_svg("j", '{"a": 1}', draw("four")) == "<svg>four</svg>"  # another kind of figure
    assert drawn == ["one", "three", "four"]
    monkeypatch.setenv("CONVDIFF_CACHE", "off")
    assert cached_svg("k", '{"a": 1}', draw("five")) == "<svg>five</svg>" and drawn[-1] == "five"


def test_cached_drift_figure_equals_a_fresh_one(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVDIFF_CACHE", "off")
    fresh = drift_svgs(CURVES)
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    assert drift_svgs(CURVES) == fresh == drift_svgs(CURVES)
    assert len(list((tmp_path / "figures").glob("drift-*.svg"))) == 1 and "<svg" in fresh[0][1]
