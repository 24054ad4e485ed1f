"""Reading back what ``oriole_workstation.render`` writes: the path of an SVG, and the parts of an HTML replay."""

from __future__ import annotations

import xml.etree.ElementTree as ET
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
