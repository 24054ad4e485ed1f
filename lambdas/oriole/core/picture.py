"""The maze as a picture: what an agent observing images (``observation`` image or both) is shown.

Two views (``imageView``), both drawn from exactly what the rules let the agent see (``oriole.core.maze.vision``):
``local`` is the square of side ``2 * visionRange + 1`` tiles centred on the agent, holding only the tiles it sees
now; ``map`` is the whole maze as the agent has seen it so far (``KnownMap``), with its position, and the goal once
seen. What is not seen is not drawn: it is the "unseen" colour, whether it is a wall, the floor or the grid's
outside.

The legend is fixed (a prompt can describe it: ``LEGEND``), a tile is ``TILE_PX`` pixels square, and no side is
longer than ``MAX_SIDE_PX`` (the longest side Claude models take without scaling down; far inside Bedrock's
8,000 px and 3.75 MB, and OpenAI's 20 MB): a view that would not fit is refused when the experiment starts
(``view_problem``). The colours are Okabe and Ito's, colour-blind safe, with lightness apart so the picture
reads in grey too; the agent is also a shape (a disc). The PNG is written by ``oriole.core.png``: the same state
gives the same bytes on every machine, so a picture is stored as its hash, size and ``params`` only, and
``regenerate`` draws it again from those and the maze (checked against the hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from oriole.core import png
from oriole.core.known_map import GOAL, MARK_OF_CELL, OPEN, TEXT_LEGEND, UNKNOWN, WALL, KnownMap
from oriole.core.maze import Maze, Position, vision
from oriole.text import JsonObject

TEXT, IMAGE, BOTH = "text", "image", "both"  # observation
MEDIA_TYPE = "image/png"


class ImageView(StrEnum):
    """What a view shows (``imageView`` for the picture, ``textView`` for the text, the same choices): the tiles in
    sight around the agent, or the map it has seen so far. Each picture has its text twin holding the same
    information: ``local``, the ``visible`` tiles of each move's result; ``map``, ``map_view`` (``text_map_view``),
    sent where the map picture is, so that image against text varies the modality alone."""

    LOCAL = "local"
    MAP = "map"


TILE_PX = 16
MAX_SIDE_PX = 1568
MAX_SIDE_TILES = MAX_SIDE_PX // TILE_PX
_AGENT_DIAMETER, _RING_DIAMETER = 11, 14  # pixels: a disc in a white ring inside its tile

# palette index -> colour, and what each stands for (the prompt v1-vision describes the same)
_UNSEEN, _OPEN, _WALL, _GOAL, _AGENT, _GRID = range(6)
PALETTE: tuple[tuple[int, int, int], ...] = (
    (0xC8, 0xC8, 0xC8),  # unseen: light grey (grey level 200)
    (0xFF, 0xFF, 0xFF),  # open floor: white (255)
    (0x00, 0x00, 0x00),  # wall: black (0)
    (0xD5, 0x5E, 0x00),  # goal: vermillion (119)
    (0x00, 0x72, 0xB2),  # agent: a blue disc (87) in a white ring, on its tile
    (0xE4, 0xE4, 0xE4),  # the grid line along an open tile's top and left edges (228)
)
LEGEND: dict[str, str] = {
    "wall": "black",
    "open": "white (a faint grid line on its top and left edges)",
    "unseen": "light grey",
    "agent": "blue disc in a white ring",
    "goal": "orange-red",
}
_PALETTE_OF = {UNKNOWN: _UNSEEN, OPEN: _OPEN, WALL: _WALL, GOAL: _GOAL}


@dataclass(frozen=True)
class Observation:
    """How the agent observes the maze: ``mode`` text, image or both; ``view`` what the picture shows, local or map
    (images only); ``text_view`` what the text shows, local or map (text only)."""

    mode: str = TEXT
    view: str = ImageView.LOCAL
    text_view: str = ImageView.LOCAL

    @property
    def text(self) -> bool:
        """The tiles it sees are written in its messages (``visible``, or ``map_view``)."""
        return self.mode != IMAGE

    @property
    def local_text(self) -> bool:
        """Each move's result writes the tiles in sight (``visible``): the local text view."""
        return self.text and self.text_view == ImageView.LOCAL

    @property
    def map_text(self) -> bool:
        """The map seen so far is written as text rows (``map_view``) where a map picture would be sent."""
        return self.text and self.text_view == ImageView.MAP

    @property
    def pictures(self) -> bool:
        return self.mode != TEXT


TEXT_ONLY = Observation()


@dataclass(frozen=True)
class Picture:
    """A rendered view: its PNG and what it shows (``params``: the view, the step it shows, the agent's position,
    the top-left tile and the size in tiles, the vision range)."""

    png: bytes
    params: JsonObject

    @property
    def width(self) -> int:
        columns: int = self.params["tiles"][0]
        return columns * TILE_PX

    @property
    def height(self) -> int:
        lines: int = self.params["tiles"][1]
        return lines * TILE_PX

    @property
    def record(self) -> JsonObject:
        """What is stored of it: its hash and size and what it showed, never the bytes."""
        return {
            "media_type": MEDIA_TYPE,
            "sha256": hashlib.sha256(self.png).hexdigest(),
            "bytes": len(self.png),
            "width": self.width,
            "height": self.height,
            **self.params,
        }

    @property
    def caption(self) -> JsonObject:
        """What the message carrying it says of it in text (kept when the picture itself is no longer sent)."""
        return {
            "view": self.params["view"],
            "step": self.params["step"],
            "top_left": self.params["origin"],
            "tiles": self.params["tiles"],
            "tile_px": TILE_PX,
        }


def view_problem(view: str, vision_range: int, maze_size: Sequence[int]) -> str | None:
    """Why a view cannot be drawn within ``MAX_SIDE_PX`` (said at start), or None."""
    tiles = 2 * vision_range + 1 if view == ImageView.LOCAL else max(maze_size)
    if tiles <= MAX_SIDE_TILES:
        return None
    what = (
        f"visionRange {vision_range} makes it {tiles} tiles a side"
        if view == ImageView.LOCAL
        else f"the maze is {maze_size[0]}x{maze_size[1]} tiles"
    )
    return (
        f"imageView {view} cannot be drawn: {what}, and at {TILE_PX} px a tile a picture holds at most "
        f"{MAX_SIDE_TILES} ({MAX_SIDE_PX} px); use a smaller "
        + ("visionRange" if view == ImageView.LOCAL else "maze or imageView local")
    )


def _tile_rows(row: Sequence[str]) -> tuple[bytes, bytes]:
    """A row of tiles as its two kinds of pixel row: the first (an open tile's top edge is a grid line) and
    the rest (an open tile's left edge is one)."""
    first, body = bytearray(), bytearray()
    for mark in row:
        colour = _PALETTE_OF[mark]
        if colour == _OPEN:
            first += bytes([_GRID]) * TILE_PX
            body += bytes([_GRID]) + bytes([_OPEN]) * (TILE_PX - 1)
        else:
            first += bytes([colour]) * TILE_PX
            body += bytes([colour]) * TILE_PX
    return bytes(first), bytes(body)


def _agent_mask() -> list[list[int | None]]:
    """The agent's mark on its tile: a blue disc in a white ring (so it stands out on the goal too). Integer
    arithmetic on doubled coordinates: no floating point whose rounding could differ between machines."""

    def pixel(px: int, py: int) -> int | None:
        distance = (2 * px - TILE_PX + 1) ** 2 + (2 * py - TILE_PX + 1) ** 2  # (2 x distance from the centre)^2
        return _AGENT if distance <= _AGENT_DIAMETER**2 else _OPEN if distance <= _RING_DIAMETER**2 else None

    return [[pixel(px, py) for px in range(TILE_PX)] for py in range(TILE_PX)]


def _rows(marks: Sequence[Sequence[str]], agent: Position) -> list[bytes]:
    """The pixel rows: each tile ``TILE_PX`` square in its colour, the agent a disc on its tile."""
    mask = _agent_mask()
    rows: list[bytes] = []
    for ty, row in enumerate(marks):
        first, body = _tile_rows(row)
        for py in range(TILE_PX):
            line = first if py == 0 else body
            if ty == agent[1]:
                drawn = bytearray(line)
                for px, colour in enumerate(mask[py]):
                    if colour is not None:
                        drawn[agent[0] * TILE_PX + px] = colour
                line = bytes(drawn)
            rows.append(line)
    return rows


def _draw(params: JsonObject, mark: Callable[[Position], str]) -> Picture:
    """The picture of ``params``'s window, each tile as ``mark`` says (one of the ``KnownMap`` marks)."""
    (x0, y0), (width, height) = params["origin"], params["tiles"]
    marks = [[mark((x, y)) for x in range(x0, x0 + width)] for y in range(y0, y0 + height)]
    position = params["position"]
    return Picture(png.encode(_rows(marks, (position[0] - x0, position[1] - y0)), PALETTE), params)


def local_view(maze: Maze, position: Position, vision_range: int, step: int) -> Picture:
    """The square around the agent with only the tiles it sees now (the grid's outside is never seen)."""
    seen = {(t.x, t.y): MARK_OF_CELL[t.cell] for t in vision(maze, position, vision_range)}
    side = 2 * vision_range + 1
    params = {
        "view": ImageView.LOCAL,
        "step": step,
        "position": list(position),
        "origin": [position[0] - vision_range, position[1] - vision_range],
        "tiles": [side, side],
        "vision_range": vision_range,
    }
    return _draw(params, lambda pos: seen.get(pos, UNKNOWN))


def map_view(known: KnownMap, position: Position, step: int, vision_range: int) -> Picture:
    """The whole maze as the agent has seen it (``known``), with where it is."""
    params = {
        "view": ImageView.MAP,
        "step": step,
        "position": list(position),
        "origin": [0, 0],
        "tiles": [known.width, known.height],
        "vision_range": vision_range,
    }
    return _draw(params, known.get)


def text_map_view(known: KnownMap, step: int) -> JsonObject:
    """The map view's text twin (``textView`` map): every tile the agent has seen so far as text rows, the rest
    unseen, whatever they are; the agent's position travels beside it, as it does beside the picture."""
    return {"view": ImageView.MAP, "step": step, "top_left": [0, 0], "rows": known.rows(), "legend": TEXT_LEGEND}


def known_map(maze: Maze, sightings: Iterable[Sequence[Sequence[int]]]) -> KnownMap:
    """What the agent had seen after the given sightings (each action's ``tiles_seen``, the start's first)."""
    camera = Camera(ImageView.MAP, maze, 0)
    for tiles in sightings:
        camera.learn(tiles)
    return camera.known


class PictureMismatch(ValueError):
    """A stored picture's parameters no longer draw the picture that was sent (its hash differs)."""


def regenerate(record: JsonObject, maze: Maze, tiles_seen: Sequence[Sequence[Sequence[int]]] = ()) -> Picture:
    """The exact picture a model was sent, drawn again from its stored ``record`` and the maze; a ``map`` view also
    needs what the agent saw: ``tiles_seen`` holds the experiment's actions' ``tiles_seen`` in step order (those
    after the record's step are left out; the start's sighting is added here). Raises ``PictureMismatch`` when the
    hash differs. For a transcript or a replay: every input is in the ``model_calls``, ``actions`` and ``mazes``
    rows."""
    position, step, vision_range = tuple(record["position"]), record["step"], record["vision_range"]
    if record["view"] == ImageView.LOCAL:
        picture = local_view(maze, position, vision_range, step)
    else:
        start = [t.as_list() for t in vision(maze, maze.start, vision_range)]
        picture = map_view(known_map(maze, [start, *tiles_seen[:step]]), position, step, vision_range)
    if picture.record["sha256"] != record["sha256"]:
        raise PictureMismatch(
            f"the {record['view']} view of step {step} drawn again has hash "
            f"{picture.record['sha256'][:12]}, not the stored {record['sha256'][:12]}"
        )
    return picture


class Camera:
    """What draws a turn's pictures: the view the experiment chose, and for ``map`` the map the agent has seen,
    which each action's sighting extends."""

    def __init__(self, view: str, maze: Maze, vision_range: int, known: KnownMap | None = None):
        self.view, self.maze, self.vision_range = view, maze, vision_range
        self.known = known if known is not None else KnownMap((maze.width, maze.height))

    def learn(self, tiles: Iterable[Sequence[int]]) -> None:
        """What one action showed (its ``tiles_seen``)."""
        self.known.see(tiles)

    def picture(self, position: Position, step: int) -> Picture:
        if self.view == ImageView.LOCAL:
            return local_view(self.maze, position, self.vision_range, step)
        return map_view(self.known, position, step, self.vision_range)
