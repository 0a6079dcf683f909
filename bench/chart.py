"""A horizontal bar chart as a self-contained SVG (no plotting library, nothing fetched)."""

from __future__ import annotations

from xml.sax.saxutils import escape

_BAR, _GAP, _LABEL, _PLOT, _TOP = 18, 6, 330, 360, 40


def bars(title: str, values: list[tuple[str, float]], reference: float = 1.0) -> str:
    """Bars for ``(label, value)`` pairs, with a dashed line at ``reference`` (1.0 = bare)."""
    top = max([reference, *(v for _, v in values)]) * 1.1
    height = _TOP + len(values) * (_BAR + _GAP) + 20
    width = _LABEL + _PLOT + 60

    def x(value: float) -> float:
        return _LABEL + _PLOT * value / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for index, (label, value) in enumerate(values):
        y = _TOP + index * (_BAR + _GAP)
        colour = "#2e7d32" if value >= 0.9 * reference else "#c62828"
        parts += [
            f'<text x="{_LABEL - 8}" y="{y + 13}" text-anchor="end">{escape(label)}</text>',
            f'<rect x="{_LABEL}" y="{y}" width="{x(value) - _LABEL:.1f}" height="{_BAR}" '
            f'fill="{colour}"/>',
            f'<text x="{x(value) + 4:.1f}" y="{y + 13}">{value:.2f}x</text>',
        ]
    line_x = x(reference)
    parts += [
        f'<line x1="{line_x:.1f}" y1="{_TOP - 6}" x2="{line_x:.1f}" y2="{height - 14}" '
        'stroke="black" stroke-dasharray="4 3"/>',
        f'<text x="{line_x:.1f}" y="{height - 2}" text-anchor="middle">bare view = {reference:g}x'
        "</text>",
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
