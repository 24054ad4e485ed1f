"""Small SVG charts for the HTML report, drawn from numbers alone: no plotting library, no external reference.

Each chart is an inline ``<svg>`` element (HTML5 needs no namespace) with a title, labelled axes and its own
legend. Series differ in lightness, marker shape and dash pattern, so they stay apart when printed in grey.
Every text that comes from the data (model names, maze names) is escaped: it is never markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from oriole_workstation.display import html_safe as escape  # escaped, and nothing obeyed

FONT = 'font-family="system-ui, sans-serif" font-size="12"'
INK, GRID, MUTED = "#222222", "#d9d9d9", "#555555"
# (fill colour, marker, dash): lightness alternates dark and light, then shapes and dashes take over
STYLES = (("#1b2a49", "circle", ""), ("#f4a81d", "square", "6 3"), ("#2a9d8f", "triangle", "2 3"),
          ("#c0392b", "diamond", "8 3 2 3"), ("#a6cee3", "circle", "4 4"), ("#6a3d9a", "square", ""),
          ("#b2df8a", "triangle", "6 3"), ("#7f7f7f", "diamond", "2 3"))
LEGEND_ROW = 18
CHAR_PX = 6.6  # the mean width of a character at the charts' font size, to fit labels


@dataclass(frozen=True)
class Series:
    """One agent (model, prompt, compared configuration) as every chart of a page draws it."""

    key: tuple
    label: str
    index: int

    @property
    def colour(self) -> str:
        return STYLES[self.index % len(STYLES)][0]

    @property
    def marker(self) -> str:
        return STYLES[self.index % len(STYLES)][1]

    @property
    def dash(self) -> str:
        return STYLES[self.index % len(STYLES)][2]


@dataclass(frozen=True)
class Point:
    """A ladder point: the success rate at one maze, its interval, and what its tooltip says."""

    category: str
    value: float | None
    low: float | None
    high: float | None
    note: str


@dataclass(frozen=True)
class Sample:
    """One experiment in a distribution: its value, what its tooltip says, and the page it links to."""

    value: float
    note: str
    link: str | None = None


@dataclass(frozen=True)
class Bar:
    series: Series
    label: str
    value: float | None
    text: str


@dataclass
class Frame:
    """A chart's plotting area inside its SVG."""

    width: int
    height: int
    left: int = 70
    right: int = 24
    top: int = 16
    bottom: int = 48
    parts: list[str] = field(default_factory=list)

    @property
    def plot_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> float:
        return self.height - self.top - self.bottom


def marker(shape: str, x: float, y: float, size: float, fill: str) -> str:
    """A marker centred on (x, y); filled in the series colour, outlined dark so light colours stay visible."""
    style = f'fill="{fill}" stroke="{INK}" stroke-width="1"'
    if shape == "square":
        return f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" height="{2 * size:.1f}" {style}/>'
    if shape in ("triangle", "diamond"):
        points = ([(x, y - size * 1.2), (x + size * 1.1, y + size * 0.8), (x - size * 1.1, y + size * 0.8)]
                  if shape == "triangle" else [(x, y - size * 1.3), (x + size * 1.1, y), (x, y + size * 1.3),
                                               (x - size * 1.1, y)])
        return f'<polygon points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in points)}" {style}/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" {style}/>'


def label(text: str, x: float, y: float, room: float, anchor: str = "start") -> str:
    """A text label cut to ``room`` pixels with an ellipsis; the whole text stays in its tooltip."""
    fits = max(int(room / CHAR_PX), 4)
    shown = text if len(text) <= fits else text[:fits - 1] + "…"
    tip = f"<title>{escape(text)}</title>" if shown != text else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {FONT} fill="{INK}">{tip}{escape(shown)}'
            f"</text>")


def label_margin(labels: Sequence[str], width: int) -> int:
    """Room on the left for row labels: the longest, up to 40 % of the chart."""
    return int(min(max((len(t) for t in labels), default=0) * CHAR_PX + 24, width * 0.4))


def legend(series: Sequence[Series], width: int, with_lines: bool = False) -> tuple[str, int]:
    """The legend as rows of swatch and label, wrapped to ``width``; its SVG and its height."""
    parts, x, y, column = [], 8.0, 12.0, 0
    for s in series:
        item_width = min(40 + CHAR_PX * len(s.label), width - 8)
        if column and x + item_width > width:
            x, y, column = 8.0, y + LEGEND_ROW, 0
        if with_lines:
            parts.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 24:.1f}" y2="{y:.1f}" stroke="{s.colour}" '
                         f'stroke-width="2" stroke-dasharray="{s.dash}"/>')
        parts.append(marker(s.marker, x + 12, y, 4.5, s.colour))
        parts.append(label(s.label, x + 30, y + 4, item_width - 40))
        x, column = x + item_width, column + 1
    return f'<g class="legend">{"".join(parts)}</g>', int(y + 12)


def svg(frame: Frame, title: str, legend_svg: str, legend_height: int, chart_id: str) -> str:
    """The whole chart: a title for assistive technology, the legend on top, the plot below it."""
    total = frame.height + legend_height
    return (f'<svg class="chart" id="{chart_id}" role="img" aria-labelledby="{chart_id}-title" '
            f'width="{frame.width}" height="{total}" viewBox="0 0 {frame.width} {total}">'
            f'<title id="{chart_id}-title">{escape(title)}</title>{legend_svg}'
            f'<g transform="translate(0,{legend_height})">{"".join(frame.parts)}</g></svg>')


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (steps of 1, 2 or 5 times a power of ten)."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    return [round(first + i * step, 10) for i in range(math.ceil((high - first) / step) + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten (with 2 and 5 between them when the range is short) covering [low, high]."""
    first, last = math.floor(math.log10(max(low, 1))), math.ceil(math.log10(max(high, 1)))
    multiples = (1, 2, 5) if last - first <= 3 else (1,)
    ticks = [m * 10 ** p for p in range(first, last + 1) for m in multiples]
    return [t for t in ticks if 10 ** first <= t <= 10 ** last]


def _format_tick(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def value_axis(frame: Frame, ticks: list[float], position: Callable[[float], float], label: str,
               horizontal: bool, formatter: Callable[[float], str] = _format_tick) -> None:
    """Grid lines, tick labels and the axis title along the value axis (horizontal: x, else y)."""
    for tick in ticks:
        p = position(tick)
        if horizontal:
            frame.parts.append(f'<line x1="{p:.1f}" y1="{frame.top}" x2="{p:.1f}" y2="{frame.top + frame.plot_height}"'
                               f' stroke="{GRID}"/><text x="{p:.1f}" y="{frame.top + frame.plot_height + 16}" '
                               f'text-anchor="middle" {FONT} fill="{MUTED}">{formatter(tick)}</text>')
        else:
            frame.parts.append(f'<line x1="{frame.left}" y1="{p:.1f}" x2="{frame.left + frame.plot_width}" '
                               f'y2="{p:.1f}" stroke="{GRID}"/><text x="{frame.left - 8}" y="{p + 4:.1f}" '
                               f'text-anchor="end" {FONT} fill="{MUTED}">{formatter(tick)}</text>')
    if horizontal:
        frame.parts.append(f'<text x="{frame.left + frame.plot_width / 2:.1f}" y="{frame.height - 8}" '
                           f'text-anchor="middle" {FONT} font-weight="600" fill="{INK}">{escape(label)}</text>')
    else:
        middle = frame.top + frame.plot_height / 2
        frame.parts.append(f'<text x="16" y="{middle:.1f}" transform="rotate(-90 16 {middle:.1f})" '
                           f'text-anchor="middle" {FONT} font-weight="600" fill="{INK}">{escape(label)}</text>')


def ladder(series: Sequence[Series], points: dict[tuple, list[Point]], categories: Sequence[str], title: str,
           chart_id: str, width: int = 960) -> str:
    """Success rate (0-100 %) with its interval per series across ordered categories (the mazes), joined by
    each series' own line style; series are set side by side within a category so whiskers never overlap."""
    frame = Frame(width, 380, bottom=110)
    band = frame.plot_width / max(len(categories), 1)
    spot = {c: frame.left + band * (i + 0.5) for i, c in enumerate(categories)}
    dodge = min(12.0, band * 0.6 / max(len(series), 1))

    def y(v: float) -> float:
        return frame.top + frame.plot_height * (1 - v)

    value_axis(frame, [i / 5 for i in range(6)], y, "success rate (95% Wilson interval)", horizontal=False,
               formatter=lambda v: f"{v * 100:.0f}%")
    for c in categories:
        x, base = spot[c], frame.top + frame.plot_height
        frame.parts.append(f'<text x="{x:.1f}" y="{base + 14}" transform="rotate(-40 {x:.1f} {base + 14})" '
                           f'text-anchor="end" {FONT} fill="{INK}">{escape(c)}</text>')
    frame.parts.append(f'<text x="{frame.left + frame.plot_width / 2:.1f}" y="{frame.height - 6}" '
                       f'text-anchor="middle" {FONT} font-weight="600" fill="{INK}">maze (smallest first)</text>')
    for s in series:
        offset = (s.index - (len(series) - 1) / 2) * dodge
        drawn = [(spot[p.category] + offset, p) for p in points.get(s.key, []) if p.value is not None]
        if len(drawn) > 1:
            line = " ".join(f"{x:.1f},{y(p.value):.1f}" for x, p in drawn)
            frame.parts.append(f'<polyline points="{line}" fill="none" stroke="{s.colour}" stroke-width="1.5" '
                               f'stroke-dasharray="{s.dash}"/>')
        for x, p in drawn:
            frame.parts.append(f'<g><title>{escape(p.note)}</title>'
                               f'<line x1="{x:.1f}" y1="{y(p.low):.1f}" x2="{x:.1f}" y2="{y(p.high):.1f}" '
                               f'stroke="{INK}" stroke-width="1"/>'
                               f'<line x1="{x - 3:.1f}" y1="{y(p.low):.1f}" x2="{x + 3:.1f}" y2="{y(p.low):.1f}" '
                               f'stroke="{INK}"/><line x1="{x - 3:.1f}" y1="{y(p.high):.1f}" x2="{x + 3:.1f}" '
                               f'y2="{y(p.high):.1f}" stroke="{INK}"/>{marker(s.marker, x, y(p.value), 4.5, s.colour)}'
                               f'</g>')
    legend_svg, legend_height = legend(series, width, with_lines=True)
    return svg(frame, title, legend_svg, legend_height, chart_id)


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
    return at(0.25), at(0.5), at(0.75)


def distribution(series: Sequence[Series], samples: dict[tuple, list[Sample]], title: str, axis_label: str,
                 chart_id: str, log_scale: bool = False, width: int = 960) -> str:
    """One row per series: every experiment as a dot (linked to its replay when there is one), the box from
    the first to the third quartile, the median as a thick line, and the range as a thin one."""
    row = 34
    frame = Frame(width, 16 + 48 + row * max(len(series), 1), left=label_margin([s.label for s in series], width))
    values = [s.value for group in samples.values() for s in group]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if log_scale:
        ticks = log_ticks(low, high)
        lo, hi = math.log10(ticks[0]), math.log10(ticks[-1]) if ticks[-1] > ticks[0] else math.log10(ticks[0]) + 1

        def x(v: float) -> float:
            return frame.left + frame.plot_width * (math.log10(max(v, ticks[0])) - lo) / (hi - lo)
    else:
        ticks = nice_ticks(min(0.0, low), max(high, 1e-9))

        def x(v: float) -> float:
            return frame.left + frame.plot_width * (v - ticks[0]) / (ticks[-1] - ticks[0])
    value_axis(frame, ticks, x, axis_label + (" (log scale)" if log_scale else ""), horizontal=True)
    for i, s in enumerate(series):
        middle = frame.top + row * (i + 0.5)
        frame.parts.append(label(s.label, frame.left - 10, middle + 4, frame.left - 14, anchor="end"))
        group = samples.get(s.key, [])
        if not group:
            frame.parts.append(f'<text x="{frame.left + 6}" y="{middle + 4:.1f}" {FONT} fill="{MUTED}">'
                               f'no success</text>')
            continue
        frame.parts.append(_box(group, middle, x))
        for n, sample in enumerate(group):
            jitter = ((n * 7919) % 11 - 5) * 1.6
            dot = (f'<g><title>{escape(sample.note)}</title>'
                   f'{marker(s.marker, x(sample.value), middle + jitter, 3.2, s.colour)}</g>')
            frame.parts.append(f'<a href="{escape(sample.link)}">{dot}</a>' if sample.link else dot)
    legend_svg, legend_height = legend(series, width)
    return svg(frame, title, legend_svg, legend_height, chart_id)


def _box(group: list[Sample], middle: float, x: Callable[[float], float]) -> str:
    q1, median, q3 = _quartiles([s.value for s in group])
    low, high = min(s.value for s in group), max(s.value for s in group)
    return (f'<line x1="{x(low):.1f}" y1="{middle:.1f}" x2="{x(high):.1f}" y2="{middle:.1f}" stroke="{MUTED}"/>'
            f'<rect x="{x(q1):.1f}" y="{middle - 10:.1f}" width="{max(x(q3) - x(q1), 1):.1f}" height="20" '
            f'fill="none" stroke="{INK}"/><line x1="{x(median):.1f}" y1="{middle - 12:.1f}" x2="{x(median):.1f}" '
            f'y2="{middle + 12:.1f}" stroke="{INK}" stroke-width="3"/>')


def bars(rows: Sequence[Bar], title: str, axis_label: str, chart_id: str, width: int = 470) -> str:
    """Horizontal bars, one per row, its value written at its end ("no success" when there is none)."""
    row = 26
    frame = Frame(width, 16 + 48 + row * max(len(rows), 1), left=label_margin([r.label for r in rows], width),
                  right=80)
    top = max([r.value for r in rows if r.value is not None] + [0.0])
    ticks = nice_ticks(0.0, top if top > 0 else 1.0, count=3)

    def x(v: float) -> float:
        return frame.left + frame.plot_width * v / ticks[-1]

    value_axis(frame, ticks, x, axis_label, horizontal=True)
    for i, r in enumerate(rows):
        middle = frame.top + row * (i + 0.5)
        frame.parts.append(label(r.label, frame.left - 10, middle + 4, frame.left - 14, anchor="end"))
        end = x(r.value or 0.0)
        if r.value is not None:
            frame.parts.append(f'<rect x="{frame.left}" y="{middle - 8:.1f}" width="{max(end - frame.left, 1):.1f}" '
                               f'height="16" fill="{r.series.colour}" stroke="{INK}"/>')
        frame.parts.append(f'<text x="{end + 6:.1f}" y="{middle + 4:.1f}" {FONT} fill="{INK}">{escape(r.text)}</text>')
    series = list({r.series.key: r.series for r in rows}.values())
    legend_svg, legend_height = legend(series, width)
    return svg(frame, title, legend_svg, legend_height, chart_id)
