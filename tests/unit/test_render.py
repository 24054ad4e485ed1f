"""Pictures of a run, from plain data: the path in order, what was seen, wall hits, where the goal was
first seen; the PNG decodes, the SVG and HTML parse, and model text in the HTML stays text."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from oriole.core.maze import Maze, vision
from oriole_workstation import render
from oriole_workstation.drawing import text_width
from oriole_workstation.rows import ExperimentRun
from tests.pictures import Page, svg_path

GRID = [[0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 2]]  # start (0, 0), goal (3, 2)
MAZE = Maze.from_rows(GRID, (0, 0), (3, 2))
WALK = [
    ("move_east", (0, 0), (1, 0), True),
    ("move_south", (1, 0), (1, 0), False),
    ("move_east", (1, 0), (2, 0), True),
    ("move_east", (2, 0), (3, 0), True),
    ("move_south", (3, 0), (3, 1), True),
    ("move_south", (3, 1), (3, 2), True),
]
EVIL = "<script>alert('x')</script>"


def record(**changes) -> ExperimentRun:
    """What ``Results.experiment_run`` returns for a run of WALK with vision range 1."""
    actions = [
        {
            "step": n,
            "turn": 1 if n <= 3 else 2,
            "action": a,
            "from": list(f),
            "to": list(t),
            "success": ok,
            "error": None if ok else "cannot move south: wall at the target tile",
            "reasoning": f"step {n} </script><b>bold</b>",
            "tiles_seen": [tile.as_list() for tile in vision(MAZE, t, 1)],
            "goal_visible": False,
        }
        for n, (a, f, t, ok) in enumerate(WALK, 1)
    ]
    return ExperimentRun(
        **{
            "experiment_id": 7,
            "llm_provider": "ollama",
            "model_name": "qwen<&>",
            "prompt_version": "v1",
            "status": "succeeded",
            "goal_found": True,
            "goal_first_seen_step": 5,
            "goal_reached_step": 6,
            "failure_reason": None,
            "vision_range": 1,
            "maze": "corridor",
            "grid": GRID,
            "start_x": 0,
            "start_y": 0,
            "goal_x": 3,
            "goal_y": 2,
            "shortest_path_length": 5,
            "optimal_path_length": 5,
            "actions": actions,
            "model_text": {"1": EVIL + " going east", "2": "almost there"},
            **changes,
        }
    )


@pytest.fixture
def run() -> render.Run:
    return render.Run.from_record(record())


def centre(pos, run) -> tuple[float, float]:
    at = render.layout(run)
    return (pos[0] + 0.5) * at.cell, at.top + (pos[1] + 0.5) * at.cell


def test_the_run_knows_its_positions_what_was_seen_and_where_the_goal_came_into_sight(run):
    assert run.positions() == [(0, 0), (1, 0), (1, 0), (2, 0), (3, 0), (3, 1), (3, 2)]
    assert run.positions(2) == [(0, 0), (1, 0), (1, 0)]
    seen = run.first_seen()
    assert seen[(0, 0)] == 0 and seen[(0, 1)] == 0 and seen[(1, 1)] == 1 and seen[(3, 2)] == 5
    assert (0, 2) not in seen and (1, 2) not in seen
    assert run.sight_position() == (3, 1)
    assert [s.number for s in run.steps if s.bumped] == [2]
    assert run.title == "experiment 7: ollama/qwen<&> (prompt v1) on corridor"


def test_efficiency_in_the_caption_counts_the_moves_that_changed_position(run):
    assert (
        run.outcome == "goal found after 6 actions, path efficiency 1.000"
    )  # optimum 5 / path 5: a wall hit is no step


def test_svg_parses_and_draws_the_path_in_order(run):
    root = ET.fromstring(render.svg(run))
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert root.find("s:title", ns).text == run.title  # escaped in the file, intact once parsed
    assert svg_path(root) == [centre(p, run) for p in run.positions()]
    bumps = root.findall(".//s:path[@class='bump']", ns)
    assert [b.get("data-step") for b in bumps] == ["2"]
    sight = root.find(".//s:g[@class='goal-first-seen']/s:circle", ns)
    assert (float(sight.get("cx")), float(sight.get("cy"))) == centre((3, 1), run)


def test_svg_of_a_long_path_cuts_it_into_coloured_stretches_from_first_to_last():
    walk = [("move_east", (0, 0), (1, 0), True), ("move_west", (1, 0), (0, 0), True)] * 100
    long_run = render.Run.from_record(
        record(
            actions=[
                {**record().actions[0], "step": n, "action": a, "from": list(f), "to": list(t), "success": ok}
                for n, (a, f, t, ok) in enumerate(walk, 1)
            ],
            goal_first_seen_step=None,
        )
    )
    root = ET.fromstring(render.svg(long_run))
    lines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
    assert 1 < len(lines) <= render.PATH_CHUNKS
    strokes = [line.get("stroke") for line in lines]
    assert strokes[0] == "#38bdf8" and strokes[-1] == "#1e1b4b"  # light blue first, dark indigo last
    assert len(set(strokes)) == len(strokes)  # a new colour each stretch
    assert sum(len(line.get("points").split()) - 1 for line in lines) == len(walk)  # every move drawn once
    assert root.find(".//{http://www.w3.org/2000/svg}g[@class='goal-first-seen']") is None


def test_png_decodes_with_the_path_on_every_tile_walked_the_start_on_top_and_unseen_tiles_pale(run):
    image = Image.open(io.BytesIO(render.png(run)))
    image.load()
    at = render.layout(run)
    assert image.format == "PNG" and image.size == (at.width, at.height)
    tiles = {render.OPEN_SEEN, render.OPEN_UNSEEN, render.WALL_SEEN, render.WALL_UNSEEN}

    def colour(xy) -> str:
        return "#{:02x}{:02x}{:02x}".format(*image.getpixel(tuple(map(int, xy))))

    under_badges = {run.maze.start, run.maze.goal}  # drawn over the path, their letters on top
    assert all(colour(centre(pos, run)) not in tiles for pos in set(run.positions()) - under_badges)
    x, y = centre(run.maze.start, run)
    assert colour((x - at.cell * 0.3, y - at.cell * 0.3)) == render.START_FILL
    assert colour(centre((0, 2), run)) == render.OPEN_UNSEEN and colour(centre((1, 1), run)) == render.WALL_SEEN
    assert colour((2 * at.cell + 2, at.top + 2 * at.cell + 2)) == render.OPEN_SEEN  # (2, 2): seen, not walked


def test_gif_animates_every_step_of_a_short_run(run):
    image = Image.open(io.BytesIO(render.gif(run)))
    assert image.format == "GIF" and image.n_frames == len(run.steps) + 1


def test_frame_steps_keep_the_start_and_the_end():
    assert render.frame_steps(3) == [0, 1, 2, 3]
    steps = render.frame_steps(10_000, frames=50)
    assert len(steps) == 50 and steps[0] == 0 and steps[-1] == 10_000 and steps == sorted(steps)


def test_html_animation_is_self_contained_and_carries_the_run_as_data(run):
    page_text = render.animation_html(run)
    page = Page()
    page.feed(page_text)
    assert [name for name, _ in page.scripts] == ["run-data", None, None]  # the run, animation.js, transcript.js
    assert json.loads(page.scripts[0][1]) == json.loads("".join(render.animation_data(run)))
    assert page.titles == [run.title, run.title]
    data = json.loads(page.scripts[0][1])
    assert data["centres"] == [list(centre(p, run)) for p in run.positions()]
    script = page.scripts[1][1]
    assert set(re.findall(r'getElementById\("([\w-]+)"\)', script)) <= page.ids
    assert not re.search(r"(src|href)=", page_text)  # nothing loaded from elsewhere


def test_html_animation_escapes_model_text(run):
    page_text = render.animation_html(run)
    assert EVIL not in page_text and "<b>bold</b>" not in page_text and "qwen<&>" not in page_text
    assert page_text.count("<script") == 3 and page_text.count("</script>") == 3
    page = Page()
    page.feed(page_text)
    data = json.loads(page.scripts[0][1])
    assert data["modelText"]["1"] == EVIL + " going east"  # intact as data, shown with textContent
    assert data["steps"][0]["reasoning"] == "step 1 </script><b>bold</b>"
    assert "textContent = run.modelText" in page.scripts[1][1] and "innerHTML = s." not in page.scripts[1][1]


def test_html_fog_records_when_each_tile_was_first_seen(run):
    root = ET.fromstring(render.svg(run, interactive=True))
    fog = {
        (int(float(r.get("x"))), int(float(r.get("y")))): int(r.get("data-seen"))
        for r in root.findall(".//{http://www.w3.org/2000/svg}g[@class='fog']/{http://www.w3.org/2000/svg}rect")
    }
    at = render.layout(run)
    by_tile = {(x // at.cell, (y - at.top) // at.cell): seen for (x, y), seen in fog.items()}
    assert by_tile[(1, 1)] == 1 and by_tile[(0, 2)] == -1 and (0, 0) not in by_tile  # seen from the start: no fog


def test_a_failure_reason_with_control_characters_still_makes_a_valid_svg():
    failed = render.Run.from_record(
        record(status="failed", failure_reason="provider said \x1b[2J\x00\x07 no", model_name="m\x1b]0;t\x07")
    )
    root = ET.fromstring(render.svg(failed))  # XML refuses those characters as they are
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any("provider said \\x1b[2J\\x00\\x07 no" in (t or "") for t in texts)
    assert "\x1b" not in failed.title and "m\\x1b]0;t\\x07" in failed.title


# --- what a person sees: buttons, the path's colours, what is on top, sizes and titles ---------------------

SVG = "{http://www.w3.org/2000/svg}"


def test_animation_buttons_are_drawn_as_svg_not_as_font_glyphs(run):
    """Debian's Chromium draws U+23EE and U+23ED as empty boxes: the buttons carry their own icons."""
    page_text = render.animation_html(run)
    for button in ("first", "prev", "play", "next", "last"):
        opened = re.search(rf'<button id="{button}"[^>]*>(.*?)</button>', page_text, re.S)
        assert opened and "<svg" in opened[1] and not re.sub(r"<[^>]+>", "", opened[1]).strip(), button
    assert not re.search(r"[\u2190-\u2bff]|&#x2[0-9a-f]{3};", page_text)  # no arrow or media glyph anywhere


def luminance(colour: str) -> float:
    """Relative luminance (WCAG) of ``#rrggbb``: what a greyscale print keeps of a colour."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_animation_path_darkens_step_by_step_so_its_order_survives_greyscale(run):
    root = ET.fromstring(render.svg(run, interactive=True))
    lines = root.findall(f".//{SVG}g[@class='trail']/{SVG}line")
    assert [int(line.get("data-step")) for line in lines] == [1, 3, 4, 5, 6]  # the wall hit (2) drew no line
    assert lines[0].get("stroke") == "#38bdf8" and lines[-1].get("stroke") == "#1e1b4b"
    grey = [luminance(line.get("stroke")) for line in lines]
    assert grey == sorted(grey, reverse=True) and len(set(grey)) == len(grey)  # darker at every step
    assert grey[0] - grey[-1] > 0.4 and grey[0] < 0.5  # far apart in grey, and the first still shows on white


@pytest.mark.parametrize("interactive", [False, True])
def test_start_goal_and_agent_are_drawn_over_the_path(run, interactive):
    order = [
        (e.tag.removeprefix(SVG), e.get("class") or e.get("id"))
        for e in ET.fromstring(render.svg(run, interactive=interactive)).iter()
    ]
    path = max(i for i, (tag, kind) in enumerate(order) if kind in ("path", "trail"))
    assert path < order.index(("g", "start")) < order.index(("g", "goal")) < order.index(("g", "agent"))
    goal = ET.fromstring(render.svg(run)).find(f".//{SVG}g[@class='goal']/{SVG}text")
    assert goal.text == "G" and goal.get("font-weight") == "bold"


def test_a_small_maze_is_not_a_thumbnail():
    small = render.Run.from_record(record())  # 4x3 tiles
    seven = Maze.from_rows([[0] * 7 for _ in range(6)] + [[0] * 6 + [2]], (0, 0), (6, 6))
    assert render.layout(small).cell == render.MAX_TILE_PX
    assert render.cell_size(seven) * 7 >= 480


def test_a_long_title_is_wrapped_never_clipped():
    long_run = render.Run.from_record(record(model_name="us.anthropic.claude-haiku-4-5-20251001-v1:0-" + "x" * 60))
    at = render.layout(long_run)
    titles = [line for kind, _, _, _, line in at.header if kind == "title"]
    assert len(titles) >= 3 and "".join(titles).replace(" ", "") == long_run.title.replace(" ", "")
    assert all(text_width(line, size) <= at.width - 12 for _, _, size, _, line in at.header)
    root = ET.fromstring(render.svg(long_run))
    assert [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "title"] == titles
    assert at.top > max(y for _, y, _, _, _ in at.header)  # the maze starts below the header


def test_the_animation_keeps_a_place_for_the_conversation(run):
    page = Page()
    page.feed(render.animation_html(run))
    assert "conversation" in page.ids
