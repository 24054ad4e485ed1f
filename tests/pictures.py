"""Reading back pictures: what ``oriole_workstation.render`` writes (the path of an SVG, the parts of an HTML
replay), and the PNG of a maze view a model server received (``decode_png``)."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser


def svg_path(root: ET.Element) -> list[tuple[float, float]]:
    """The points of the path's stretches in an SVG, joined back into one line."""
    points = []
    for line in root.findall(".//{http://www.w3.org/2000/svg}polyline[@class='path']"):
        pairs = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        points += pairs[1:] if points and points[-1] == pairs[0] else pairs
    return points


class Page(HTMLParser):
    """Collects what the tests look at: the text of each script, element ids, the titles (page and SVG)."""

    def __init__(self):
        super().__init__()
        self.scripts, self.ids, self.titles, self._in = [], set(), [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "script":
            self.scripts.append([attrs.get("id"), ""])
        if tag == "title":
            self.titles.append("")
        self._in = tag

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1][1] += data
        elif self._in == "title":
            self.titles[-1] += data


@dataclass(frozen=True)
class DecodedPng:
    """A PNG read back by ``decode_png``: its size, palette (indexed colour) and pixel rows (one value a pixel)."""

    width: int
    height: int
    palette: list[tuple[int, int, int]]
    rows: list[bytes]

    def colour(self, x: int, y: int) -> tuple[int, int, int]:
        return self.palette[self.rows[y][x]]


class PngError(ValueError):
    """Bytes that are not a PNG a decoder would show."""


def decode_png(data: bytes) -> DecodedPng:
    """Decode an 8-bit indexed-colour PNG the way an image library does: the signature, every chunk's CRC, IHDR
    first and IEND last, the IDAT stream inflated by zlib (its Adler-32 checked), every row unfiltered."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise PngError("not a PNG signature")
    chunks, offset = [], 8
    while offset < len(data):
        if offset + 12 > len(data):
            raise PngError("truncated chunk")
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, payload = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        if len(payload) != length or zlib.crc32(kind + payload) != crc:
            raise PngError(f"chunk {kind!r} has a bad CRC or length")
        chunks.append((kind, payload))
        offset += 12 + length
    if not chunks or chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        raise PngError("IHDR must come first and IEND last")
    width, height, depth, colour_type, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, colour_type, compression, filtering, interlace) != (8, 3, 0, 0, 0):
        raise PngError("expected 8-bit indexed colour, not interlaced")
    plte = next(payload for kind, payload in chunks if kind == b"PLTE")
    palette = [tuple(plte[i : i + 3]) for i in range(0, len(plte), 3)]
    raw = zlib.decompress(b"".join(payload for kind, payload in chunks if kind == b"IDAT"))
    if len(raw) != height * (width + 1):
        raise PngError(f"image data holds {len(raw)} bytes, not {height * (width + 1)}")
    rows, above = [], bytes(width)
    for y in range(height):
        kind, line = raw[y * (width + 1)], raw[y * (width + 1) + 1 : (y + 1) * (width + 1)]
        row = _unfilter(kind, line, above)
        if max(row, default=0) >= len(palette):
            raise PngError("a pixel names a colour outside the palette")
        rows.append(row)
        above = row
    return DecodedPng(width, height, palette, rows)


def _unfilter(kind: int, line: bytes, above: bytes) -> bytes:
    out = bytearray(len(line))
    for i, value in enumerate(line):
        left = out[i - 1] if i else 0
        up, corner = above[i], above[i - 1] if i else 0
        if kind == 0:
            predictor = 0
        elif kind == 1:
            predictor = left
        elif kind == 2:
            predictor = up
        elif kind == 3:
            predictor = (left + up) // 2
        elif kind == 4:
            p = left + up - corner
            predictor = min((abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner))[2]
        else:
            raise PngError(f"unknown filter type {kind}")
        out[i] = (value + predictor) & 0xFF
    return bytes(out)
