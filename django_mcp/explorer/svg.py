"""A small SVG builder for the dashboard's charts, rendered on the server.

Charts are drawn here rather than by a JavaScript library so the dashboard needs no CDN, no
build step and no script at all: the admin page is plain HTML with inline ``<svg>``. Every
text that reaches the markup (labels come from the request log, so from clients) goes
through :func:`html.escape`; numbers are formatted, never interpolated raw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

WIDTH: Final = 720
PALETTE: Final = ("#417690", "#ba2121", "#79aec8", "#e1a700", "#5b8a3c", "#7a5ba8")


@dataclass(frozen=True)
class Series:
    """One named row of values, drawn in one colour."""

    name: str
    values: Sequence[float]


def _num(value: float) -> str:
    """A coordinate as short, locale-free text."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _label(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return _num(value)


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mcp-chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def stacked_bars(
    title: str, labels: Sequence[str], series: Sequence[Series], *, height: int = 220
) -> str:
    """Vertical bars, one per label, each stacking the series' values (e.g. ok/errors)."""
    count = len(labels)
    if count == 0 or not series:
        return empty(title)
    if any(len(item.values) != count for item in series):
        raise ValueError("every series needs one value per label")
    left, bottom, top = 44, 28, 24
    plot_w, plot_h = WIDTH - left - 8, height - bottom - top
    totals = [sum(item.values[i] for item in series) for i in range(count)]
    peak = max(totals) or 1
    step = plot_w / count
    bar_w = max(step * 0.8, 1)
    body = [_legend(series, left, 14), *_axis(left, top, plot_w, plot_h, peak)]
    for i, label in enumerate(labels):
        x, base = left + i * step + (step - bar_w) / 2, float(top + plot_h)
        for colour, item in zip(PALETTE, series, strict=False):
            value = item.values[i]
            if value <= 0:
                continue
            h = value / peak * plot_h
            base -= h
            body.append(
                f'<rect class="bar" x="{_num(x)}" y="{_num(base)}" width="{_num(bar_w)}" '
                f'height="{_num(h)}" fill="{colour}"><title>{escape(label)}: '
                f"{escape(item.name)} {_label(value)}</title></rect>"
            )
    every = max(1, count // 8)
    for i in range(0, count, every):
        x = left + i * step + step / 2
        body.append(
            f'<text x="{_num(x)}" y="{height - 10}" font-size="10" text-anchor="middle">'
            f"{escape(labels[i])}</text>"
        )
    return _svg(WIDTH, height, title, body)


def horizontal_bars(
    title: str, rows: Sequence[tuple[str, float]], *, unit: str = "", colour: str = PALETTE[0]
) -> str:
    """One bar per row, longest first as given: "top N by ..." charts."""
    if not rows:
        return empty(title)
    row_h, left = 22, 220
    height = row_h * len(rows) + 8
    peak = max(value for _, value in rows) or 1
    plot_w = WIDTH - left - 70
    body: list[str] = []
    for i, (name, value) in enumerate(rows):
        y = 4 + i * row_h
        w = max(value / peak * plot_w, 1)
        shown = name if len(name) <= 34 else name[:33] + "…"
        body.append(
            f'<text x="{left - 6}" y="{y + 15}" font-size="12" text-anchor="end">'
            f"{escape(shown)}</text>"
            f'<rect class="bar" x="{left}" y="{y + 3}" width="{_num(w)}" height="{row_h - 6}" '
            f'fill="{colour}"><title>{escape(name)}: {_label(value)}{escape(unit)}</title></rect>'
            f'<text x="{_num(left + w + 4)}" y="{y + 15}" font-size="11">'
            f"{_label(value)}{escape(unit)}</text>"
        )
    return _svg(WIDTH, height, title, body)


def empty(title: str) -> str:
    """The chart of nothing: a frame saying so, so an empty window is not a broken page."""
    body = [
        f'<text class="empty" x="{WIDTH // 2}" y="34" font-size="13" text-anchor="middle" '
        f'fill="#666">No requests in this window</text>'
    ]
    return _svg(WIDTH, 60, title, body)


def _legend(series: Sequence[Series], x: int, y: int) -> str:
    parts = []
    for i, (colour, item) in enumerate(zip(PALETTE, series, strict=False)):
        at = x + i * 110
        parts.append(
            f'<rect x="{at}" y="{y - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{at + 14}" y="{y}" font-size="11">{escape(item.name)}</text>'
        )
    return "".join(parts)


def _axis(left: int, top: int, width: float, height: float, peak: float) -> list[str]:
    """The baseline and three horizontal grid lines with their values."""
    lines = []
    for fraction in (0.0, 0.5, 1.0):
        y = top + height - fraction * height
        lines.append(
            f'<line x1="{left}" y1="{_num(y)}" x2="{_num(left + width)}" y2="{_num(y)}" '
            f'stroke="#ddd"/><text x="{left - 4}" y="{_num(y + 4)}" font-size="10" '
            f'text-anchor="end">{_label(peak * fraction)}</text>'
        )
    return lines
