"""The dashboard's SVG builder: well-formed, escaped, proportional."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from django_mcp.explorer import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def test_stacked_bars_draw_one_rect_per_nonzero_value_scaled_to_the_peak():
    markup = svg.stacked_bars(
        "t", ["a", "b"], [svg.Series("ok", [2.0, 4.0]), svg.Series("errors", [0.0, 4.0])]
    )
    bars = [r for r in parse(markup).iter(f"{NS}rect") if r.get("class") == "bar"]
    assert len(bars) == 3  # a zero value draws nothing
    heights = sorted(float(r.get("height") or 0) for r in bars)
    # b's two halves stack to the full plot height; a's bar is a quarter of it.
    assert heights[0] == pytest.approx(heights[1] / 2)
    assert heights[1] == pytest.approx(heights[2])


def test_labels_from_the_log_are_escaped():
    hostile = '<script>alert("x")</script>&'
    markup = svg.horizontal_bars("t", [(hostile, 3.0)])
    assert "<script>" not in markup
    texts = [t.text for t in parse(markup).iter(f"{NS}text")]
    assert hostile in texts  # readable as text, not markup


def test_an_empty_window_says_so_instead_of_drawing_nothing():
    for markup in (svg.stacked_bars("t", [], []), svg.horizontal_bars("t", [])):
        assert "No requests in this window" in markup
        parse(markup)


def test_series_must_match_the_labels():
    with pytest.raises(ValueError, match="one value per label"):
        svg.stacked_bars("t", ["a", "b"], [svg.Series("ok", [1.0])])
