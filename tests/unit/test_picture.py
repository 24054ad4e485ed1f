"""The maze as a picture: the PNG writer's bytes (the same on every machine, read by zlib, Pillow and our own
decoder alike), the two views following the maze's vision rules exactly, the size bound, the legend the
v1-vision prompt describes, and drawing a stored picture again from its record."""

from __future__ import annotations

import hashlib
import io
import random
import zlib
from itertools import pairwise

import pytest
from PIL import Image

from oriole import catalog
from oriole.core import mazeset, picture, png
from oriole.core.known_map import KnownMap
from oriole.core.maze import Maze, vision
from oriole.core.turn_loop import Message, message_as_json
from tests.pictures import decode_png

MAZE = mazeset.get_maze("perfect-11").maze
UNSEEN, OPEN, WALL, GOAL, AGENT, GRID = picture.PALETTE


def tile(image, x: int, y: int):
    """The colour at the centre-right of a picture tile (clear of the agent's disc and the grid line)."""
    return image.colour(x * picture.TILE_PX + picture.TILE_PX - 2, y * picture.TILE_PX + picture.TILE_PX - 2)


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00", bytes(70_000), bytes(range(256)) * 5, bytes(random.Random(7).randrange(3) for _ in range(20_000))],
)
def test_the_deflate_stream_is_one_zlib_inflates_back(data):
    assert zlib.decompress(png.zlib_stream(data)) == data


def test_the_same_view_gives_the_same_bytes_on_every_machine():
    """The writer compresses by itself (never the interpreter's zlib), so the hash is fixed: this one was written
    on the machine that wrote the code, and every machine must draw it again."""
    view = picture.local_view(MAZE, MAZE.start, 3, 0)
    assert hashlib.sha256(view.png).hexdigest() == "2ebf36133235e7e8377e5a47d9587f8ea1d9275c2148c9c8a2b2dd3ca57e4907"


def test_pillow_and_our_decoder_read_the_same_pixels():
    view = picture.map_view(
        picture.known_map(MAZE, [[t.as_list() for t in vision(MAZE, MAZE.start, 3)]]), MAZE.start, 0, 3
    )
    ours = decode_png(view.png)
    pillow = Image.open(io.BytesIO(view.png)).convert("RGB")
    assert pillow.size == (ours.width, ours.height) == (11 * picture.TILE_PX, 11 * picture.TILE_PX)
    assert all(
        pillow.getpixel((x, y)) == ours.colour(x, y) for y in range(0, ours.height, 3) for x in range(0, ours.width, 3)
    )


def test_the_local_view_draws_only_the_four_rays_and_nothing_outside_the_grid():
    maze = Maze.from_rows([[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 2], [0, 0, 0, 0, 0]], (0, 2), (4, 2))
    image = decode_png(picture.local_view(maze, (0, 2), 3, 5).png)
    assert (image.width, image.height) == (7 * picture.TILE_PX,) * 2
    centre = 3  # the agent's tile in a 7x7 window
    assert image.colour(centre * picture.TILE_PX + 7, centre * picture.TILE_PX + 7) == AGENT
    assert [tile(image, centre + dx, centre) for dx in range(1, 4)] == [OPEN, OPEN, OPEN]  # east: open up to x 3
    assert [tile(image, centre, centre - dy) for dy in (1, 2)] == [OPEN, OPEN]  # north: (0,1), (0,0)
    assert tile(image, centre - 1, centre) == UNSEEN  # west: outside the grid, never seen
    assert tile(image, centre + 1, centre - 1) == UNSEEN  # (1, 1) is a wall, but off the rays: not drawn
    far = decode_png(picture.local_view(maze, (1, 2), 3, 5).png)
    assert tile(far, 6, 3) == GOAL  # from (1, 2) the goal at (4, 2) is in sight
    assert tile(far, 3, 2) == WALL  # the wall north of (1, 2) stops that ray


def test_the_map_view_shows_what_was_seen_and_the_goal_only_once_seen():
    path = MAZE.shortest_path()
    early = picture.known_map(MAZE, [[t.as_list() for t in vision(MAZE, p, 3)] for p in path[:2]])
    image = decode_png(picture.map_view(early, path[1], 1, 3).png)
    assert tile(image, *MAZE.goal) == UNSEEN
    assert sum(row.count(0) for row in image.rows) > 0
    late = picture.known_map(MAZE, [[t.as_list() for t in vision(MAZE, p, 3)] for p in path])
    assert tile(decode_png(picture.map_view(late, path[-2], len(path), 3).png), *MAZE.goal) == GOAL
    for (x, y), mark in ((p, early.get(p)) for p in [(x, y) for y in range(11) for x in range(11)]):
        expected = {"?": UNSEEN, ".": OPEN, "#": WALL, "G": GOAL}[mark]
        if (x, y) != path[1]:
            assert tile(image, x, y) == expected


@pytest.mark.parametrize("seen", [1, 4, 12])
def test_each_picture_has_a_text_twin_holding_the_same_tiles(seen):
    """Image against text varies the modality alone: the map picture and the text map view (textView map) show the
    same tiles, tile for tile; the local picture and the visible tiles of the local text view the same sighting."""
    from oriole.core.tools import observation

    path = MAZE.shortest_path()[:seen]
    known = picture.known_map(MAZE, [[t.as_list() for t in vision(MAZE, p, 3)] for p in path])
    image = decode_png(picture.map_view(known, path[-1], seen, 3).png)
    rows = picture.text_map_view(known, seen)["rows"]
    assert len(rows) == MAZE.height and {len(row) for row in rows} == {MAZE.width}
    colour = {"?": UNSEEN, ".": OPEN, "#": WALL, "G": GOAL}
    for y, row in enumerate(rows):
        for x, mark in enumerate(row):
            if (x, y) != path[-1]:  # the agent's disc covers its tile: its position travels beside, in text too
                assert tile(image, x, y) == colour[mark], (x, y)
    local = decode_png(picture.local_view(MAZE, path[-1], 3, seen).png)
    _, text = observation(MAZE, path[-1], 3)
    shown = {(x, y): mark for mark, key in ((".", "open"), ("#", "walls")) for x, y in text["visible"].get(key, ())}
    if text["visible"].get("goal"):
        shown[tuple(text["visible"]["goal"])] = "G"
    (x0, y0) = (path[-1][0] - 3, path[-1][1] - 3)
    for ty in range(7):
        for tx in range(7):
            if (tx, ty) != (3, 3):
                assert tile(local, tx, ty) == colour[shown.get((x0 + tx, y0 + ty), "?")], (tx, ty)


def test_a_view_larger_than_the_bound_is_refused_with_the_reason():
    assert picture.view_problem("local", 3, (60, 60)) is None and picture.view_problem("map", 3, (60, 60)) is None
    assert "visionRange 49 makes it 99 tiles a side" in picture.view_problem("local", 49, (7, 7))
    assert "the maze is 120x40 tiles" in picture.view_problem("map", 3, (120, 40))
    biggest = picture.local_view(MAZE, MAZE.start, (picture.MAX_SIDE_TILES - 1) // 2, 0)
    assert max(biggest.width, biggest.height) <= picture.MAX_SIDE_PX
    # the busiest picture the bound allows (every tile differs from its neighbours) stays far inside Converse's
    # 3.75 MB an image
    side = picture.MAX_SIDE_TILES
    busy = KnownMap((side, side), "".join("#.?G"[(x * 7 + y * 3) % 4] for y in range(side) for x in range(side)))
    assert len(picture.map_view(busy, (0, 0), 0, 3).png) < 100_000


def test_a_stored_picture_is_its_record_and_is_drawn_again_exactly():
    view = picture.local_view(MAZE, (1, 3), 3, 4)
    stored = message_as_json(Message("user", {"picture": view.caption}, picture=view))
    assert stored["picture"] == view.record and "png" not in stored["picture"]
    assert stored["picture"]["bytes"] == len(view.png) and stored["picture"]["width"] == 7 * picture.TILE_PX
    assert picture.regenerate(stored["picture"], MAZE).png == view.png
    with pytest.raises(picture.PictureMismatch, match="drawn again has hash"):
        picture.regenerate({**stored["picture"], "position": [1, 1]}, MAZE)


def test_the_vision_prompt_describes_the_legend_the_pictures_use():
    prompt = catalog.shipped_prompt("v1-vision")
    for name, colour in picture.LEGEND.items():
        assert name in prompt and colour.split(" (")[0] in prompt
    assert {"observation", "imageView"} <= set(catalog.BY_KEY)
    assert catalog.BY_KEY["observation"].choices == (picture.TEXT, picture.IMAGE, picture.BOTH)
    assert catalog.BY_KEY["imageView"].choices == tuple(picture.ImageView)


def test_the_text_views_prompt_is_the_vision_prompt_with_text_for_pictures():
    """v1-text against v1-vision varies the modality alone: the same world, tools and advice, the views described
    as the text twins show them (the map view's legend is the one its messages carry)."""
    from oriole.core.known_map import TEXT_LEGEND

    text, vision_ = catalog.shipped_prompt("v1-text"), catalog.shipped_prompt("v1-vision")
    shown = slice(text.index("What you are shown:"), text.index("Your tools:"))
    assert text[: shown.start] == vision_[: vision_.index("What you are shown:")]
    assert text[shown.stop :] == vision_[vision_.index("Your tools:") :].replace("picture", "view")
    described = {"wall": "a wall", "open": "open floor", "goal": "the goal", "not seen": "unseen"}
    for mark, name in (part.split(" ", 1) for part in TEXT_LEGEND.split(";")[0].split(", ")):
        assert f"{mark} is {described[name]}" in text[shown], mark
    assert '"visible"' in text and '"map_view"' in text and "picture" not in text


def test_the_palette_reads_in_grey():
    """Wall, goal, unseen and open floor are far apart in lightness (the agent is also a shape)."""
    grey = sorted(round(0.299 * r + 0.587 * g + 0.114 * b) for r, g, b in (WALL, GOAL, UNSEEN, OPEN))
    assert min(b - a for a, b in pairwise(grey)) >= 50
