"""The report's charts as small multiples: one panel per maze family and size (or per maze), one row per
series (an agent with its prompt and configuration) in every panel, drawn from numbers alone.

A success rate is a dot with its interval as a whisker; a distribution is every experiment as a dot over its
box. Categories are never joined by a line: a row or a panel stands for itself. A series keeps its colour
(Okabe-Ito's colour-blind-safe palette) and its marker (shape, filled or hollow) in every chart, and no two
series of a page share both, so they stay apart in grey. Labels are wrapped, never cut: on the page each row
carries its series' whole label; a paper figure keys its rows by letter and lists every label in full below.
The layout is a ``drawing.Drawing``, written as inline SVG, a standalone SVG or a PNG.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from oriole_workstation.drawing import INK, MARKERS, Drawing, Group, Line, Marker, Rect, Text, text_width, wrap

# Okabe and Ito's palette, ordered so the series that share a shape (index i and i + 7) differ in lightness
PALETTE = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442")
MUTED, GRID, SHADE, BAND = "#555555", "#d4d4d4", "#f3f3f3", "#b0b0b0"


@dataclass(frozen=True)
class Series:
    """One agent (model, prompt, compared configuration) as every chart of a page draws it: ``agent`` and
    ``detail`` (prompt and configuration) make its label."""

    key: tuple
    agent: str
    detail: str
    index: int

    @property
    def label(self) -> str:
        return f"{self.agent} · {self.detail}" if self.detail else self.agent

    @property
    def colour(self) -> str:
        return PALETTE[self.index % len(PALETTE)]

    @property
    def shape(self) -> str:
        return MARKERS[self.index % len(MARKERS)]

    @property
    def hollow(self) -> bool:
        """The second eight series are drawn hollow: with colour and shape, 112 series stay apart."""
        return (self.index // len(PALETTE)) % 2 == 1

    @property
    def code(self) -> str:
        """A, B, ... Z, AA, AB, ...: the series' key in a figure too narrow for its label."""
        n, code = self.index, ""
        while True:
            n, rest = divmod(n, 26)
            code = chr(ord("A") + rest) + code
            if n == 0:
                return code
            n -= 1

    def marker(self, x: float, y: float, size: float) -> Marker:
        return Marker(self.shape, x, y, size, self.colour, self.hollow)


@dataclass(frozen=True)
class Sample:
    """One experiment in a distribution: its value, what its tooltip says, and the replay it links to."""

    value: float
    note: str
    link: str | None = None


@dataclass(frozen=True)
class Cell:
    """What one panel shows for one series: a dot (``value``) with a whisker (``low``-``high``) and a band
    (``band``), or ``samples`` as a distribution; ``count`` is written at the row's right end, ``empty`` in
    place of the row when there is nothing to draw."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    band: tuple[float, float] | None = None
    samples: tuple[Sample, ...] = ()
    note: str = ""
    count: str = ""
    empty: str = "no runs"


@dataclass(frozen=True)
class Panel:
    title: str
    cells: dict[tuple, Cell]


@dataclass(frozen=True)
class Style:
    """A chart's size and type: ``unit`` px for the page, pt for a paper figure; ``keyed`` rows are labelled
    by their series' code, with the full labels listed below the panels."""

    width: float
    font: float
    unit: str
    keyed: bool
    panel_width: float

    @property
    def small(self) -> float:
        return self.font * 0.88

    @property
    def line(self) -> float:
        return self.font * 1.2

    @property
    def stroke(self) -> float:
        return self.font / 12


PAGE = Style(width=1180, font=12, unit="px", keyed=False, panel_width=150)
COLUMN = Style(width=252, font=7.5, unit="pt", keyed=True, panel_width=74)  # a paper column: 3.5 in


@dataclass(frozen=True)
class Axis:
    """A horizontal value axis shared by every panel of a chart."""

    low: float
    high: float
    title: str
    format: Callable[[float], str]
    log: bool = False
    ticks: tuple[float, ...] = field(default=())

    def fraction(self, value: float) -> float:
        if self.log:
            low, high = math.log10(self.low), math.log10(self.high)
            return (math.log10(max(value, self.low)) - low) / (high - low)
        return (value - self.low) / (self.high - self.low)

    def tick_values(self, room: float, size: float) -> list[float]:
        """The ticks that fit in ``room`` without their labels touching."""
        ticks = list(self.ticks)
        widest = max(text_width(self.format(t), size) for t in ticks) * 1.2
        if self.log and room / (len(ticks) - 1) < widest:
            ticks = [t for t in ticks if math.log10(t).is_integer()]
        while len(ticks) > 2 and room / (len(ticks) - 1) < widest:
            ticks = ticks[::2] if len(ticks) % 2 else [*ticks[:-1:2], ticks[-1]]
        return ticks


def rate_axis(title: str) -> Axis:
    """A rate from 0 to 1, its ticks in percent (the unit in the title keeps them narrow)."""
    return Axis(0.0, 1.0, f"{title} (%)", lambda v: f"{v * 100:.0f}", ticks=(0.0, 0.25, 0.5, 0.75, 1.0))


def value_axis(values: Sequence[float], title: str, log: bool, format: Callable[[float], str]) -> Axis:
    """An axis over ``values``: from zero on a linear scale, over whole powers of ten on a log scale."""
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    ticks = log_ticks(low, high) if log else nice_ticks(min(0.0, low), max(high, 1e-9), count=4)
    if log and len(ticks) < 2:
        ticks = [ticks[0], ticks[0] * 10]
    return Axis(ticks[0], ticks[-1], title + (" (log scale)" if log else ""), format, log, tuple(ticks))


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
    ticks = [m * 10**p for p in range(first, last + 1) for m in multiples]
    return [t for t in ticks if 10**first <= t <= 10**last]


def format_number(value: float) -> str:
    """A tick label: 20k for 20,000 (narrow enough for a paper column's panels), 1,500, 0.5."""
    if value >= 10_000 and value % 1000 == 0:
        return f"{value / 1_000_000:g}M" if value % 1_000_000 == 0 else f"{value / 1000:,g}k"
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


# --- layout ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """Where things go: the label column, the panels per grid row, each series' row label and height."""

    style: Style
    keyed: bool  # rows labelled by their series' code, the labels listed below
    label_width: float
    count_width: float
    columns: int
    labels: dict[tuple, tuple[str, ...]]
    heights: dict[tuple, float]

    @property
    def panel_width(self) -> float:
        return (self.style.width - self.label_width) / self.columns

    def plot(self, column: int) -> tuple[float, float]:
        """The left and right ends of a panel's plotting area."""
        left = self.label_width + column * self.panel_width + self.style.font * 0.9
        return left, left + self.panel_width - self.count_width - self.style.font * 1.9


LABEL_SHARE = 0.3  # at most this share of a page chart's width for its row labels
KEYED_LABEL_SHARE = 0.4  # a paper figure's: whole labels where they fit in it, else codes and a key below


def _grid(series: Sequence[Series], panels: Sequence[Panel], style: Style, min_row: float) -> _Grid:
    """Where things go. A keyed style (a paper column) labels its rows by code only when the whole labels do not
    fit beside the panels on one line each."""
    marker_room = style.font * 1.6
    room = style.width * (KEYED_LABEL_SHARE if style.keyed else LABEL_SHARE) - marker_room
    keyed = style.keyed and any(text_width(s.label, style.font) > room for s in series)
    if keyed:
        labels: dict[tuple, tuple[str, ...]] = {s.key: (s.code,) for s in series}
        label_width = marker_room + max(text_width(s.code, style.font) for s in series) + style.font
    else:
        labels = {
            s.key: tuple(wrap(s.agent, room, style.font) + (wrap(s.detail, room, style.small) if s.detail else []))
            for s in series
        }
        widest = max(text_width(line, style.font) for lines in labels.values() for line in lines)
        label_width = marker_room + min(room, widest) + style.font
    counts = [c.count for p in panels for c in p.cells.values() if c.count]
    count_width = max((text_width(c, style.small) for c in counts), default=0.0)
    columns = max(1, min(len(panels), int((style.width - label_width) // style.panel_width)))
    heights = {s.key: max(min_row, style.line * len(labels[s.key]) + style.font * 0.5) for s in series}
    return _Grid(style, keyed, label_width, count_width, columns, labels, heights)


def panel_chart(
    series: Sequence[Series],
    panels: Sequence[Panel],
    axis: Axis,
    style: Style,
    title: str,
    caption: str,
    cell_shapes: Callable[[Series, Cell, Callable[[float], float], float, float, Style], list],
) -> Drawing:
    """Panels in rows of as many as fit the width, each with one row per series; ``cell_shapes`` draws a
    series' cell given its x scale, its row's middle and height."""
    spread = any(c.samples for p in panels for c in p.cells.values())
    min_row = style.font * (2.2 if spread else 1.6) if style.keyed else style.font * (2.6 if spread else 1.9)
    grid = _grid(series, panels, style, min_row)
    drawing = Drawing(style.width, 0, title, caption, style.unit)
    y = style.font * 0.4
    for first in range(0, len(panels), grid.columns):
        y = _panel_row(drawing, series, panels[first : first + grid.columns], axis, grid, y, cell_shapes)
        y += style.font * 0.9 if first + grid.columns < len(panels) else 0.0
    left, _ = grid.plot(0)
    _, right = grid.plot(min(len(panels), grid.columns) - 1)
    drawing.add(
        Text(
            (left + right) / 2, y + style.font, (axis.title,), style.font, anchor="middle", bold=True, role="axis-title"
        )
    )
    y += style.font * 1.8
    if grid.keyed:
        y = _key(drawing, series, style, y)
    drawing.height = y + style.font * 0.4
    return drawing


def _panel_row(
    drawing: Drawing,
    series: Sequence[Series],
    panels: Sequence[Panel],
    axis: Axis,
    grid: _Grid,
    top: float,
    cell_shapes: Callable,
) -> float:
    """One row of panels with the row labels on its left; returns where the next begins."""
    style = grid.style
    titles = [wrap(p.title, grid.panel_width - style.font * 1.8, style.font) for p in panels]
    title_height = style.line * max(len(t) for t in titles) + style.font * 0.3
    rows_top = top + title_height
    rows_bottom = rows_top + sum(grid.heights[s.key] for s in series)
    for column, title in enumerate(titles):
        left, right = grid.plot(column)
        drawing.add(Text(left, top + style.font, tuple(title), style.font, bold=True, role="panel-title"))
        for tick in axis.tick_values(right - left, style.small):
            at = left + (right - left) * axis.fraction(tick)
            drawing.add(
                Line(at, rows_top, at, rows_bottom, GRID, style.stroke),
                Text(
                    at,
                    rows_bottom + style.small * 1.3,
                    (axis.format(tick),),
                    style.small,
                    MUTED,
                    anchor="middle",
                    role="tick",
                ),
            )
    y = rows_top
    for n, s in enumerate(series):
        height = grid.heights[s.key]
        middle = y + height / 2
        if n % 2 == 0:
            drawing.add(Rect(0, y, style.width, height, fill=SHADE))
        lines = grid.labels[s.key]
        first_line = middle - (style.line * len(lines)) / 2 + style.font * 0.9
        drawing.add(
            s.marker(style.font * 0.7, middle, style.font * 0.38),
            Text(style.font * 1.6, first_line, lines, style.font, role="series-label"),
        )
        for column, panel in enumerate(panels):
            left, right = grid.plot(column)

            def x(value: float, left: float = left, right: float = right) -> float:
                return left + (right - left) * axis.fraction(value)

            cell = panel.cells.get(s.key, Cell())
            drawing.add(*cell_shapes(s, cell, x, middle, height, style))
            if cell.count:
                drawing.add(
                    Text(
                        left + grid.panel_width - style.font * 1.2,
                        middle + style.small * 0.35,
                        (cell.count,),
                        style.small,
                        MUTED,
                        anchor="end",
                        role="count",
                    )
                )
        y += height
    for column in range(len(panels)):
        left, right = grid.plot(column)
        drawing.add(Line(left, rows_bottom, right, rows_bottom, INK, style.stroke))
    return rows_bottom + style.small * 2.2


def _key(drawing: Drawing, series: Sequence[Series], style: Style, top: float) -> float:
    """The full label of every series under its code and marker, wrapped to the width."""
    indent = style.font * 1.6 + max(text_width(s.code, style.small) for s in series) * 1.15 + style.font * 0.5
    y = top
    for s in series:
        lines = wrap(s.label, style.width - indent - style.font * 0.3, style.small)
        drawing.add(
            s.marker(style.font * 0.7, y + style.small * 0.55, style.font * 0.34),
            Text(style.font * 1.6, y + style.small * 0.9, (s.code,), style.small, bold=True, role="key-code"),
            Text(indent, y + style.small * 0.9, tuple(lines), style.small, role="series-label"),
        )
        y += style.small * 1.2 * len(lines) + style.small * 0.35
    return y


# --- what a cell shows -----------------------------------------------------------------------------------


def _empty(cell: Cell, x: Callable[[float], float], middle: float, style: Style, axis_low: float) -> list:
    return [
        Text(
            x(axis_low) + style.font * 0.3,
            middle + style.small * 0.35,
            (cell.empty,),
            style.small,
            MUTED,
            role="no-runs",
        )
    ]


def dot_cell(
    s: Series,
    cell: Cell,
    x: Callable[[float], float],
    middle: float,
    height: float,
    style: Style,
    axis_low: float = 0.0,
) -> list:
    """A dot at the value; the thin whisker and its caps are the interval, the grey band behind it the second
    interval (the bootstrap over mazes)."""
    if cell.value is None:
        return _empty(cell, x, middle, style, axis_low)
    shapes: list = []
    if cell.band is not None:
        shapes.append(Line(x(cell.band[0]), middle, x(cell.band[1]), middle, BAND, style.font * 0.55))
    if cell.low is not None and cell.high is not None:
        cap = style.font * 0.3
        low, high = x(cell.low), x(cell.high)
        shapes += [
            Line(low, middle, high, middle, INK, style.stroke * 1.2),
            Line(low, middle - cap, low, middle + cap, INK, style.stroke * 1.2),
            Line(high, middle - cap, high, middle + cap, INK, style.stroke * 1.2),
        ]
    shapes.append(s.marker(x(cell.value), middle, style.font * 0.4))
    return [Group(tuple(shapes), tooltip=cell.note or None, role="dot")]


def distribution_cell(
    s: Series,
    cell: Cell,
    x: Callable[[float], float],
    middle: float,
    height: float,
    style: Style,
    axis_low: float = 0.0,
) -> list:
    """Every sample as a dot (linked to its replay), the range as a thin line and, from three samples on, a box
    from the first to the third quartile with the median as a thick line, both drawn over the dots with a white
    edge, so that no pile of markers hides them."""
    if not cell.samples:
        return _empty(cell, x, middle, style, axis_low)
    values = [sample.value for sample in cell.samples]
    box = height * 0.28
    shapes: list = [Line(x(min(values)), middle, x(max(values)), middle, MUTED, style.stroke)]
    for n, sample in enumerate(cell.samples):
        jitter = ((n * 7919) % 9 - 4) / 4 * box * 0.8 if len(values) > 1 else 0.0
        dot = Group((s.marker(x(sample.value), middle + jitter, style.font * 0.27),), tooltip=sample.note)
        shapes.append(Group((dot,), link=sample.link) if sample.link else dot)
    if len(values) >= 3:  # fewer samples have no middle half to show; drawn over the markers, which never hide it
        q1, median, q3 = quartiles(values)
        left, width = x(q1), max(x(q3) - x(q1), style.stroke)
        shapes += [
            Rect(left, middle - box, width, 2 * box, stroke="#ffffff", stroke_width=style.stroke * 3),
            Rect(left, middle - box, width, 2 * box, stroke=INK, stroke_width=style.stroke),
            Line(x(median), middle - box * 1.15, x(median), middle + box * 1.15, "#ffffff", style.stroke * 5),
            Line(x(median), middle - box * 1.15, x(median), middle + box * 1.15, INK, style.stroke * 2.5),
        ]
    return [Group(tuple(shapes), role="distribution")]


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return at(0.25), at(0.5), at(0.75)


def dots(
    series: Sequence[Series], panels: Sequence[Panel], axis: Axis, style: Style, title: str, caption: str
) -> Drawing:
    return panel_chart(
        series, panels, axis, style, title, caption, lambda s, c, x, m, h, st: dot_cell(s, c, x, m, h, st, axis.low)
    )


def distributions(
    series: Sequence[Series], panels: Sequence[Panel], axis: Axis, style: Style, title: str, caption: str
) -> Drawing:
    return panel_chart(
        series,
        panels,
        axis,
        style,
        title,
        caption,
        lambda s, c, x, m, h, st: distribution_cell(s, c, x, m, h, st, axis.low),
    )


# --- success by step -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """One series' Kaplan-Meier curve in one panel: ``points`` (step, share that succeeded within it) where it
    rises or runs were censored, in step order, ``censored`` the steps at which runs were censored."""

    points: tuple[tuple[float, float], ...]
    censored: tuple[float, ...] = ()


MARKS_PER_CURVE = 6  # markers along a curve (besides its colour) so curves stay apart in grey


def curves(
    series: Sequence[Series],
    panels: Sequence[tuple[str, dict[tuple, Curve]]],
    style: Style,
    title: str,
    caption: str,
) -> Drawing:
    """Step curves of a share from 0 to 1 over steps, one panel per family and size (or maze), each series in its
    colour with its marker spaced along the curve and at its end; a short vertical tick where runs were censored;
    the series' labels listed below the panels."""
    panel_width = style.panel_width * 2
    columns = max(1, min(len(panels), int(style.width // panel_width)))
    plot_height = style.font * 11
    drawing = Drawing(style.width, 0, title, caption, style.unit)
    y = style.font * 0.4
    for first in range(0, len(panels), columns):
        for column, (panel_title, drawn) in enumerate(panels[first : first + columns]):
            _curve_panel(drawing, series, panel_title, drawn, column * panel_width, y, panel_width, plot_height, style)
        y += plot_height + style.font * 5
    drawing.height = _legend(drawing, series, style, y) + style.font * 0.4
    return drawing


def _curve_panel(
    drawing: Drawing,
    series: Sequence[Series],
    title: str,
    drawn: dict[tuple, Curve],
    left_edge: float,
    top: float,
    width: float,
    height: float,
    style: Style,
) -> None:
    left, right = left_edge + style.font * 3, left_edge + width - style.font * 1.2
    plot_top = top + style.line * 1.5
    bottom = plot_top + height
    last = max((p[0] for c in drawn.values() for p in c.points), default=1.0)
    ticks = nice_ticks(0.0, max(last, 1.0), count=4)

    def x(step: float) -> float:
        return left + (right - left) * step / ticks[-1]

    def y(share: float) -> float:
        return bottom - height * share

    drawing.add(Text(left, top + style.font, (title,), style.font, bold=True, role="panel-title"))
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        drawing.add(
            Line(left, y(share), right, y(share), GRID, style.stroke),
            Text(
                left - style.font * 0.3,
                y(share) + style.small * 0.35,
                (f"{share * 100:.0f}",),
                style.small,
                MUTED,
                anchor="end",
                role="tick",
            ),
        )
    for tick in ticks:
        drawing.add(
            Text(
                x(tick),
                bottom + style.small * 1.3,
                (format_number(tick),),
                style.small,
                MUTED,
                anchor="middle",
                role="tick",
            )
        )
    drawing.add(
        Line(left, bottom, right, bottom, INK, style.stroke),
        Text(
            (left + right) / 2,
            bottom + style.small * 2.8,
            ("actions (steps)",),
            style.small,
            anchor="middle",
            role="axis-title",
        ),
    )
    for s in series:
        curve = drawn.get(s.key)
        if curve is None or not curve.points:
            continue
        shapes: list = []
        at = (0.0, 0.0)
        for step, share in curve.points:
            shapes.append(Line(x(at[0]), y(at[1]), x(step), y(at[1]), s.colour, style.stroke * 2))
            if share != at[1]:
                shapes.append(Line(x(step), y(at[1]), x(step), y(share), s.colour, style.stroke * 2))
            at = (step, share)
        shares = dict(curve.points)
        for step in curve.censored:
            mark = y(shares.get(step, 0.0))
            shapes.append(
                Line(x(step), mark - style.font * 0.35, x(step), mark + style.font * 0.35, s.colour, style.stroke * 1.5)
            )
        spaced = curve.points[:: max(1, len(curve.points) // MARKS_PER_CURVE)]
        for step, share in (*spaced, curve.points[-1]):
            shapes.append(s.marker(x(step), y(share), style.font * 0.3))
        end = curve.points[-1]
        drawing.add(Group(tuple(shapes), tooltip=f"{s.label}: {end[1] * 100:.1f}% by step {end[0]:g}", role="curve"))


def _legend(drawing: Drawing, series: Sequence[Series], style: Style, top: float) -> float:
    """Each series' marker and whole label, one per line, wrapped to the width."""
    y = top
    for s in series:
        lines = wrap(s.label, style.width - style.font * 2, style.small)
        drawing.add(
            s.marker(style.font * 0.7, y + style.small * 0.55, style.font * 0.34),
            Text(style.font * 1.6, y + style.small * 0.9, tuple(lines), style.small, role="series-label"),
        )
        y += style.small * 1.2 * len(lines) + style.small * 0.35
    return y
