"""A figure as a list of plain shapes, written as SVG text or painted into a PNG with Pillow.

The charts (``charts``) lay their shapes out once, in the figure's own units (pixels on the HTML page, points
in a paper figure); this module only writes them, so the SVG and the PNG of a figure are the same drawing.
Text is laid out here too: ``wrap`` breaks a label into lines that fit a width, never dropping a character,
with a width estimate wide enough for the broadest common sans-serif (DejaVu Sans), so a label measured here
fits in any browser's font. Every text is escaped on its way into SVG: data is never markup.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any

FONT_FAMILY = "Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif"
INK = "#222222"
MARKERS = ("circle", "square", "triangle", "diamond", "triangle-down", "plus", "star")
_NARROW = set("iljtfrI.,:;'|! ")
_WIDE = set("mwMW@%#&")


def _em(c: str) -> float:
    """A character's width in em, at least DejaVu Sans's (the widest common sans-serif)."""
    if c in _NARROW:
        return 0.34
    if c in "()[]{}":
        return 0.4
    if c in _WIDE:
        return 0.92
    if c.isdigit():
        return 0.64
    return 0.74 if c.isupper() else 0.62


def text_width(text: str, size: float) -> float:
    """An upper estimate of ``text``'s width at font size ``size`` in a sans-serif font."""
    return sum(map(_em, text)) * size * 1.02


def wrap(text: str, width: float, size: float) -> list[str]:
    """``text`` in lines no wider than ``width``: broken at spaces; a word longer than a line is broken after
    ``/ . - _ ·`` (else between characters) and continues the line it starts on. Joined back (with the spaces),
    the lines hold every character of ``text``."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if text_width(candidate, size) <= width:
            line = candidate
            continue
        if text_width(word, size) <= width:
            lines.append(line)
            line = word
            continue
        line += " " if line else ""
        for piece in _pieces(word, width, size):
            if line.strip() and text_width(line + piece, size) > width:
                lines.append(line.rstrip())
                line = ""
            line += piece
    lines.append(line)
    return lines


def _pieces(word: str, width: float, size: float) -> list[str]:
    """A word cut after its separators and before an ``@`` (a seeded maze's seed stays whole: ``perfect-11`` /
    ``@1234567890``), and a piece still too wide cut into characters that fit."""
    pieces, current = [], ""
    for c in word:
        if c == "@" and current:
            pieces.append(current)
            current = ""
        current += c
        if c in "/.-_·":
            pieces.append(current)
            current = ""
    pieces.append(current)
    out = []
    for piece in filter(None, pieces):
        while len(piece) > 1 and text_width(piece, size) > width:
            fits = max((n for n in range(1, len(piece)) if text_width(piece[:n], size) <= width), default=1)
            out.append(piece[:fits])
            piece = piece[fits:]
        out.append(piece)
    return out


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    colour: str = INK
    width: float = 1.0
    cap: str = "butt"


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: str | None = None
    stroke: str | None = None
    stroke_width: float = 1.0


@dataclass(frozen=True)
class Marker:
    """A series' marker: its shape (one of ``MARKERS``), filled in its colour or hollow (a thick coloured
    outline on white), so two series that share a shape still differ in grey."""

    shape: str
    x: float
    y: float
    size: float
    colour: str
    hollow: bool = False


@dataclass(frozen=True)
class Text:
    """One or more lines of text; ``y`` is the first line's baseline, each next line ``size * 1.2`` below."""

    x: float
    y: float
    lines: tuple[str, ...]
    size: float
    colour: str = INK
    anchor: str = "start"  # start, middle or end
    bold: bool = False
    role: str = ""  # a class for readers of the SVG (e.g. "label", "no-runs")

    @property
    def height(self) -> float:
        return self.size * 1.2 * len(self.lines)


@dataclass(frozen=True)
class Group:
    """Shapes that belong together: a tooltip (an SVG ``<title>``) and a link on the page; the PNG paints only
    the shapes."""

    shapes: tuple
    tooltip: str | None = None
    link: str | None = None
    role: str = ""


@dataclass
class Drawing:
    """A whole figure: its size in ``unit`` (``px`` or ``pt``), a title and a caption (``<title>``, ``<desc>``)."""

    width: float
    height: float
    title: str
    caption: str = ""
    unit: str = "px"
    shapes: list = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)  # provenance, written into the SVG's <metadata>

    def add(self, *shapes: object) -> None:
        self.shapes.extend(shapes)


def with_provenance(drawing: Drawing, line: str, metadata: dict[str, str]) -> Drawing:
    """The drawing with ``line`` closing its caption (``Provenance.short``) and ``metadata`` in its SVG."""
    caption = f"{drawing.caption} {line}." if drawing.caption else f"{line}."
    return replace(drawing, caption=caption, metadata=dict(metadata))


def marker_points(shape: str, x: float, y: float, size: float) -> list[tuple[float, float]]:
    """The polygon of a marker centred on (x, y) whose half-width is about ``size`` (not for circles)."""
    if shape == "square":
        s = size * 0.9
        return [(x - s, y - s), (x + s, y - s), (x + s, y + s), (x - s, y + s)]
    if shape == "diamond":
        return [(x, y - size * 1.25), (x + size, y), (x, y + size * 1.25), (x - size, y)]
    if shape in ("triangle", "triangle-down"):
        flip = 1 if shape == "triangle" else -1
        return [
            (x, y - flip * size * 1.2),
            (x + size * 1.1, y + flip * size * 0.85),
            (x - size * 1.1, y + flip * size * 0.85),
        ]
    if shape == "plus":
        a, b = size * 1.1, size * 0.38
        return [
            (x - b, y - a),
            (x + b, y - a),
            (x + b, y - b),
            (x + a, y - b),
            (x + a, y + b),
            (x + b, y + b),
            (x + b, y + a),
            (x - b, y + a),
            (x - b, y + b),
            (x - a, y + b),
            (x - a, y - b),
            (x - b, y - b),
        ]
    if shape == "star":
        radii = (size * 1.3, size * 0.55)
        return [
            (x + radii[k % 2] * math.sin(k * math.pi / 5), y - radii[k % 2] * math.cos(k * math.pi / 5))
            for k in range(10)
        ]
    raise ValueError(f"unknown marker {shape}")


def _marker_layers(m: Marker) -> list[tuple[float, str, str | None, float]]:
    """The marker as shapes painted in order, ``(size, fill, outline, outline width)``: a filled marker is
    outlined dark so a light colour stays visible; a hollow one is a ring of its colour on white with a thin dark
    edge outside, so a light colour stays visible in grey too."""
    if not m.hollow:
        return [(m.size, m.colour, INK, max(0.6, m.size * 0.16))]
    edge, ring = max(0.5, m.size * 0.14), max(1.2, m.size * 0.38)
    return [(m.size + edge, INK, None, 0.0), (m.size, m.colour, None, 0.0), (m.size - ring, "#ffffff", None, 0.0)]


# --- SVG -------------------------------------------------------------------------------------------------


def to_svg(drawing: Drawing, element_id: str | None = None) -> str:
    """The drawing as one ``<svg>`` element: a standalone file (with its namespace, sized in its unit), or with
    ``element_id`` an element inline in an HTML page (which needs no namespace: the page names no URL)."""
    w, h, unit = _number(drawing.width), _number(drawing.height), drawing.unit
    size = f'width="{w}{"" if unit == "px" else unit}" height="{h}{"" if unit == "px" else unit}"'
    if element_id:
        ident = escape(element_id)
        head = f'<svg id="{ident}" class="chart" role="img" aria-labelledby="{ident}-title"'
        title = f'<title id="{ident}-title">'
    else:
        head, title = '<svg xmlns="http://www.w3.org/2000/svg"', "<title>"
    return (
        f'{head} {size} viewBox="0 0 {w} {h}" font-family="{FONT_FAMILY}">{title}{escape(drawing.title)}</title>'
        + (f"<desc>{escape(drawing.caption)}</desc>" if drawing.caption else "")
        + _svg_metadata(drawing.metadata)
        + f'<rect width="{w}" height="{h}" fill="#ffffff"/>'
        + "".join(_svg_shape(s) for s in drawing.shapes)
        + "</svg>"
    )


METADATA_NS = "urn:oriole:provenance"  # the namespace of the elements below: a name, no address


def _svg_metadata(items: dict[str, str]) -> str:
    """The provenance as SVG ``<metadata>``: one element per item in its own namespace (SVG's place for data
    about the picture, kept by editors and readable with any XML parser)."""
    if not items:
        return ""
    body = "".join(f"<oriole:{name}>{escape(value)}</oriole:{name}>" for name, value in items.items())
    return f'<metadata><oriole:provenance xmlns:oriole="{METADATA_NS}">{body}</oriole:provenance></metadata>'


def _svg_marker(m: Marker, size: float, fill: str, outline: str | None, width: float) -> str:
    n = _number
    style = f'fill="{fill}"' + (f' stroke="{outline}" stroke-width="{n(width)}"' if outline else "")
    if m.shape == "circle":
        return f'<circle class="marker" cx="{n(m.x)}" cy="{n(m.y)}" r="{n(size)}" {style}/>'
    points = " ".join(f"{n(px)},{n(py)}" for px, py in marker_points(m.shape, m.x, m.y, size))
    return f'<polygon class="marker" points="{points}" {style}/>'


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _svg_shape(shape: object) -> str:
    n = _number
    if isinstance(shape, Line):
        return (
            f'<line x1="{n(shape.x1)}" y1="{n(shape.y1)}" x2="{n(shape.x2)}" y2="{n(shape.y2)}" '
            f'stroke="{shape.colour}" stroke-width="{n(shape.width)}"'
            + (f' stroke-linecap="{shape.cap}"' if shape.cap != "butt" else "")
            + "/>"
        )
    if isinstance(shape, Rect):
        return (
            f'<rect x="{n(shape.x)}" y="{n(shape.y)}" width="{n(shape.width)}" height="{n(shape.height)}" '
            f'fill="{shape.fill or "none"}"'
            + (f' stroke="{shape.stroke}" stroke-width="{n(shape.stroke_width)}"' if shape.stroke else "")
            + "/>"
        )
    if isinstance(shape, Marker):
        return "".join(_svg_marker(shape, *layer) for layer in _marker_layers(shape))
    if isinstance(shape, Text):
        anchor = f' text-anchor="{shape.anchor}"' if shape.anchor != "start" else ""
        weight = ' font-weight="bold"' if shape.bold else ""
        role = f' class="{shape.role}"' if shape.role else ""
        if len(shape.lines) == 1:
            body = escape(shape.lines[0])
        else:
            step = f' dy="{n(shape.size * 1.2)}"'
            body = "".join(
                f'<tspan x="{n(shape.x)}"{step if i else ""}>{escape(line)}</tspan>'
                for i, line in enumerate(shape.lines)
            )
        return (
            f'<text{role} x="{n(shape.x)}" y="{n(shape.y)}" font-size="{n(shape.size)}" fill="{shape.colour}"'
            f"{anchor}{weight}>{body}</text>"
        )
    if isinstance(shape, Group):
        inner = (f"<title>{escape(shape.tooltip)}</title>" if shape.tooltip else "") + "".join(
            _svg_shape(s) for s in shape.shapes
        )
        role = f' class="{shape.role}"' if shape.role else ""
        group = f"<g{role}>{inner}</g>"
        return f'<a href="{escape(shape.link)}">{group}</a>' if shape.link else group
    raise TypeError(f"cannot draw {type(shape).__name__}")


# --- PNG -------------------------------------------------------------------------------------------------


def png_possible() -> bool:
    """Whether Pillow is installed with FreeType (its scalable default font): what a PNG's text needs."""
    try:
        from PIL import features
    except ImportError:
        return False
    return bool(features.check("freetype2"))


def to_png(drawing: Drawing, dpi: int = 300) -> bytes:
    """The drawing painted by Pillow: a figure in points at ``dpi``, a page chart in pixels at twice its size."""
    from PIL import Image, ImageDraw

    scale = dpi / 72 if drawing.unit == "pt" else 2.0
    image = Image.new("RGB", (math.ceil(drawing.width * scale), math.ceil(drawing.height * scale)), "#ffffff")
    painter = _Painter(ImageDraw.Draw(image), scale)
    for shape in drawing.shapes:
        painter.paint(shape)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True, dpi=(dpi, dpi))
    return buffer.getvalue()


class _Painter:
    """Paints shapes onto a Pillow canvas at ``scale`` device pixels per unit."""

    def __init__(self, draw, scale: float):
        self.draw, self.scale = draw, scale
        self.fonts: dict[float, Any] = {}  # Pillow's fonts by pixel size, loaded once each

    def _font(self, size: float):
        from PIL import ImageFont

        key = round(size * self.scale, 1)
        if key not in self.fonts:
            self.fonts[key] = ImageFont.load_default(key)
        return self.fonts[key]

    def _xy(self, points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x * self.scale, y * self.scale) for x, y in points]

    def paint(self, shape: object) -> None:
        s, draw = self.scale, self.draw
        if isinstance(shape, Line):
            draw.line(
                self._xy([(shape.x1, shape.y1), (shape.x2, shape.y2)]),
                fill=shape.colour,
                width=max(1, round(shape.width * s)),
            )
        elif isinstance(shape, Rect):
            box = self._xy([(shape.x, shape.y), (shape.x + shape.width, shape.y + shape.height)])
            draw.rectangle(
                box,
                fill=shape.fill,
                outline=shape.stroke,
                width=max(1, round(shape.stroke_width * s)) if shape.stroke else 0,
            )
        elif isinstance(shape, Marker):
            for size, fill, outline, width in _marker_layers(shape):
                pixels = max(1, round(width * s)) if outline else 0
                if shape.shape == "circle":
                    r, cx, cy = size * s, shape.x * s, shape.y * s
                    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=outline, width=pixels)
                else:
                    draw.polygon(
                        self._xy(marker_points(shape.shape, shape.x, shape.y, size)),
                        fill=fill,
                        outline=outline,
                        width=pixels,
                    )
        elif isinstance(shape, Text):
            font = self._font(shape.size)
            anchor = {"start": "ls", "middle": "ms", "end": "rs"}[shape.anchor]
            for i, line in enumerate(shape.lines):
                draw.text(
                    (shape.x * s, (shape.y + i * shape.size * 1.2) * s),
                    line,
                    fill=shape.colour,
                    font=font,
                    anchor=anchor,
                    stroke_width=0.15 * s if shape.bold else 0,
                    stroke_fill=shape.colour,
                )
        elif isinstance(shape, Group):
            for inner in shape.shapes:
                self.paint(inner)
        else:
            raise TypeError(f"cannot paint {type(shape).__name__}")
