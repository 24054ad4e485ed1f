"""Pictures of a run: the maze, the path in the order it was walked, the tiles the agent saw, where it first
saw the goal and every move into a wall; as PNG and SVG, and as animations (an animated GIF, and a
self-contained HTML page with step controls).

Rendering is pure: a ``Run`` (plain data built from the stored experiment) goes in, bytes or text come out,
so every format is tested without a database. ``oriole render`` loads the run through the store and
writes the files. Model text in the HTML animation is data, never markup: it travels as escaped JSON and is
shown through ``textContent``.
"""

from __future__ import annotations

import functools
import html
import io
import itertools
import json
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from oriole.core.maze import DIRECTIONS, WALL, Maze, Position, vision
from oriole.errors import OrioleError
from oriole.statuses import ExperimentStatus
from oriole_workstation import assets, files
from oriole_workstation.display import terminal_safe
from oriole_workstation.drawing import wrap
from oriole_workstation.outcomes import outcome_text
from oriole_workstation.rows import ExperimentRun

OPEN_SEEN, OPEN_UNSEEN = "#ffffff", "#e2e5ea"
WALL_SEEN, WALL_UNSEEN = "#2f3542", "#9aa3ae"
GOAL_FILL, START_FILL = "#b45309", "#15803d"  # dark enough for a white letter, apart in grey
# The path darkens from light blue (first move) to dark indigo (last): its order shows in lightness, so it survives
# greyscale and colour-blindness (the luminance falls from about 0.45 to 0.02).
PATH_FIRST, PATH_LAST = (56, 189, 248), (30, 27, 75)
BUMP, SIGHT, INK = "#dc2626", "#f59e0b", "#111827"
LEGEND = (
    "path: light blue first, dark indigo last · x: move into a wall · orange ring: where the goal was first seen · "
    "square: the agent · pale: never seen"
)
HEADER = (("title", 14, INK), ("outcome", 12, "#4b5563"), ("legend", 11, "#6b7280"))  # kind, font px, colour
MIN_WIDTH_PX = 480  # room for the header above a small maze
MAX_TILE_PX = 80  # a 7x7 maze is drawn 560 px wide, not as a thumbnail
PATH_CHUNKS = 48  # colour steps along the path
GIF_FRAMES = 120
# The memory budget: drawing a run's four files takes at most this much more resident memory than drawing a
# three-action run's, plus this much per action (tests/integration/test_render_long.py)
MEMORY_BASE_BYTES, MEMORY_PER_ACTION_BYTES = 100 * 2**20, 100
CONVERSATION_MAX_ACTIONS = 10_000  # an animation page with a longer run's conversation would not open


@dataclass(frozen=True)
class Step:
    """One stored action, as a picture needs it (made when asked for: ``Steps`` keeps them column by column)."""

    number: int
    turn: int
    action: str
    start: Position
    end: Position
    success: bool
    error: str | None
    reasoning: str | None

    @property
    def bumped(self) -> bool:
        """A move into a wall (or off the grid): the agent stayed where it was."""
        return self.action.startswith("move_") and not self.success


class Steps(Sequence[Step]):
    """A run's actions in order, column by column: about 30 bytes an action in arrays, beside the text (the
    error and the reasoning) of the actions that have some, so a run of a million actions is held in tens of
    megabytes, not as a million objects. A ``Step`` is made only when one is asked for."""

    def __init__(self) -> None:
        self._numbers, self._turns = array("i"), array("i")
        self._xy = array("i")  # from x, from y, to x, to y: four per action
        self._codes, self._success = array("L"), bytearray()
        self._names: list[str] = []  # the action names, each once; ``_codes`` index them
        self._code_of: dict[str, int] = {}
        self._texts: dict[int, tuple[str | None, str | None]] = {}  # index -> (error, reasoning)

    def append(self, row: Mapping[str, Any]) -> None:
        """One stored action (``ExperimentRun.actions``' dict) at the end."""
        action = row["action"]
        if action not in self._code_of:
            self._code_of[action] = len(self._names)
            self._names.append(action)
        self._numbers.append(row["step"])
        self._turns.append(row["turn"])
        self._xy.extend((*row["from"], *row["to"]))
        self._codes.append(self._code_of[action])
        self._success.append(bool(row["success"]))
        if row["error"] is not None or row["reasoning"] is not None:
            self._texts[len(self._numbers) - 1] = (_shown(row["error"]), _shown(row["reasoning"]))

    def __len__(self) -> int:
        return len(self._numbers)

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...

    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]
        error, reasoning = self._texts.get(i, (None, None))
        x1, y1, x2, y2 = self._xy[4 * i : 4 * i + 4]
        return Step(
            self._numbers[i],
            self._turns[i],
            self._names[self._codes[i]],
            (x1, y1),
            (x2, y2),
            bool(self._success[i]),
            error,
            reasoning,
        )

    def __iter__(self) -> Iterator[Step]:
        return (self[i] for i in range(len(self)))

    def end(self, i: int) -> Position:
        """Where action ``i`` (0-based) left the agent, without making its ``Step``."""
        return self._xy[4 * i + 2], self._xy[4 * i + 3]

    def bumps(self) -> dict[tuple[Position, str], tuple[int, int]]:
        """Each wall hit, once per tile and direction (the same cross drawn again is the same picture):
        (tile, action) -> (how many actions in it was first hit, that action's step number)."""
        found: dict[tuple[Position, str], tuple[int, int]] = {}
        moves = self._move_codes()
        for i in range(len(self)):
            if not self._success[i] and self._codes[i] in moves:
                tile = self._xy[4 * i], self._xy[4 * i + 1]
                found.setdefault((tile, self._names[self._codes[i]]), (i + 1, self._numbers[i]))
        return found

    def moved(self) -> int:
        """Moves that changed position (``path_length``)."""
        moves = self._move_codes()
        return sum(1 for i in range(len(self)) if self._success[i] and self._codes[i] in moves)

    def _move_codes(self) -> set[int]:
        return {code for code, name in enumerate(self._names) if name.startswith("move_")}


@functools.lru_cache(maxsize=256)  # a long run repeats its errors ("cannot move north: ...") thousands of times
def _shown(text: str | None) -> str | None:
    """Model text as the animation shows it: whole, with what a browser would obey or hide written out."""
    return None if text is None else terminal_safe(text, lines=True)


@dataclass(frozen=True)
class Run:
    """An experiment to draw: its maze, its actions in order and what is written around them."""

    experiment_id: int
    title: str
    outcome: str
    maze: Maze
    steps: Steps
    goal_first_seen_step: int | None
    start_seen: frozenset[Position]
    seen_at: dict[Position, int]  # each tile the agent saw, with the step it first saw it at (0: from the start)
    model_text: dict[int, str]
    conversation: str | None = None  # the transcript's HTML (``transcript.conversation_html``), already escaped

    @classmethod
    def from_record(cls, record: ExperimentRun, conversation: str | None = None) -> Run:
        """From ``Results.experiment_run``: the experiment row with its maze, actions and model text (and the
        conversation pane's HTML, when the transcript could be rebuilt)."""
        maze = Maze.from_rows(record.grid, (record.start_x, record.start_y), (record.goal_x, record.goal_y))
        start_seen = frozenset((t.x, t.y) for t in vision(maze, maze.start, record.vision_range or 0))
        steps, seen_at = Steps(), dict.fromkeys(start_seen, 0)
        for action in record.actions:  # read once: from the database, a stream
            steps.append(action)
            for x, y, _ in action["tiles_seen"] or ():
                seen_at.setdefault((x, y), action["step"])
        outcome = outcome_text(record.status, record.failure_reason) + f" after {len(steps)} actions"
        if record.status == ExperimentStatus.SUCCEEDED and steps:
            path = steps.moved()
            optimum = record.optimal_path_length
            outcome += f", path efficiency {optimum / max(optimum, path) if max(optimum, path) else 1.0:.3f}"
        if record.failure_reason:
            outcome += f" ({record.failure_reason})"
        title = (
            f"experiment {record.experiment_id}: {record.llm_provider}/{record.model_name} "
            f"(prompt {record.prompt_version}) on {record.maze}"
        )
        return cls(  # the one-line texts with control characters written out: SVG (XML) cannot hold them
            experiment_id=record.experiment_id,
            title=terminal_safe(title),
            outcome=terminal_safe(outcome),
            maze=maze,
            steps=steps,
            goal_first_seen_step=record.goal_first_seen_step,
            start_seen=start_seen,
            seen_at=seen_at,
            model_text={int(turn): terminal_safe(text, lines=True) for turn, text in record.model_text.items()},
            conversation=conversation,
        )

    def positions(self, upto: int | None = None) -> list[Position]:
        """Where the agent stood: the start, then after each of the first ``upto`` actions (all by default)."""
        return self.stretch(0, len(self.steps) if upto is None else min(upto, len(self.steps)))

    def position(self, k: int) -> Position:
        """Where the agent stood after ``k`` actions (0: the start)."""
        return self.maze.start if k == 0 else self.steps.end(k - 1)

    def stretch(self, first: int, last: int) -> list[Position]:
        """Where the agent stood after ``first`` actions, then after each action up to ``last``: one stretch of the
        path, made only when it is drawn."""
        return [self.position(k) for k in range(first, last + 1)]

    @functools.cached_property
    def bumps(self) -> dict[tuple[Position, str], tuple[int, int]]:
        """The wall hits to draw (``Steps.bumps``), found once however many frames draw them."""
        return self.steps.bumps()

    def first_seen(self) -> dict[Position, int]:
        """Each tile the agent saw, with the step it first saw it at (0: from the start)."""
        return dict(self.seen_at)

    def sight_position(self) -> Position | None:
        """Where the agent stood when it first saw the goal."""
        if self.goal_first_seen_step is None:
            return None
        return self.position(min(self.goal_first_seen_step, len(self.steps)))


# --- geometry shared by the PNG and SVG painters ---------------------------------------------------------


def cell_size(maze: Maze, target_px: int = 720) -> int:
    """Pixels per tile: the maze about ``target_px`` wide, tiles between 6 and ``MAX_TILE_PX`` pixels."""
    return max(6, min(MAX_TILE_PX, target_px // max(maze.width, maze.height)))


@dataclass(frozen=True)
class Layout:
    """Where a picture's parts go: the tile size, the canvas, and the header above the maze, its title, outcome
    and legend wrapped to the canvas's width (``(kind, baseline, font px, colour, text)`` per line)."""

    cell: int
    width: int
    top: int
    height: int
    header: tuple[tuple[str, float, int, str, str], ...]

    def centre(self, pos: Position) -> tuple[float, float]:
        return (pos[0] + 0.5) * self.cell, self.top + (pos[1] + 0.5) * self.cell

    def tile(self, pos: Position) -> tuple[int, int]:
        """The tile's top-left corner."""
        return pos[0] * self.cell, self.top + pos[1] * self.cell


def layout(run: Run, target_px: int = 720) -> Layout:
    """The picture's layout for ``run``: every header line whole, however narrow the maze."""
    cell = cell_size(run.maze, target_px)
    width = max(MIN_WIDTH_PX, run.maze.width * cell)
    texts = {"title": run.title, "outcome": run.outcome, "legend": LEGEND}
    header, y = [], 4.0
    for kind, size, colour in HEADER:
        for line in wrap(texts[kind], width - 12, size):
            y += size * 1.3
            header.append((kind, y, size, colour, line))
    top = round(y + 10)
    return Layout(cell, width, top, top + run.maze.height * cell, tuple(header))


def _tile_fill(maze: Maze, pos: Position, seen: bool) -> str:
    if maze.cell(pos) == WALL:
        return WALL_SEEN if seen else WALL_UNSEEN
    return OPEN_SEEN if seen else OPEN_UNSEEN


def _row_runs(maze: Maze, seen: set[Position] | dict) -> list[tuple[int, int, int, str]]:
    """Each row as runs of tiles with the same fill: (y, x0, length, fill). Far fewer shapes than tiles."""
    runs = []
    for y in range(maze.height):
        fills = [_tile_fill(maze, (x, y), (x, y) in seen) for x in range(maze.width)]
        x0 = 0
        for x in range(1, maze.width + 1):
            if x == maze.width or fills[x] != fills[x0]:
                runs.append((y, x0, x - x0, fills[x0]))
                x0 = x
    return runs


def _ramp(t: float) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(round(a + (b - a) * t) for a, b in zip(PATH_FIRST, PATH_LAST, strict=True)))


def _path_chunks(segments: int) -> list[tuple[int, int, str]]:
    """The path of ``segments`` actions cut into up to ``PATH_CHUNKS`` consecutive pieces, (first index, last index
    into the positions, colour): the colour says when a stretch was walked, from the first move to the last."""
    if segments < 1:
        return []
    size = max(1, -(-segments // PATH_CHUNKS))
    firsts = range(0, segments, size)
    return [(first, min(first + size, segments), _ramp(n / max(1, len(firsts) - 1))) for n, first in enumerate(firsts)]


def _bump_mark(tile: Position, action: str, at: Layout) -> tuple[tuple[float, float], float]:
    """A failed move's cross: at the edge of the tile the agent tried to leave, on the wall's side."""
    dx, dy = DIRECTIONS[action.removeprefix("move_")]
    cx, cy = at.centre(tile)
    return (cx + dx * at.cell * 0.42, cy + dy * at.cell * 0.42), max(2.0, at.cell * 0.16)


def _badge(at: Layout, pos: Position) -> tuple[float, float, float]:
    """The start's or the goal's badge over its tile: its top-left corner and side, inside the tile so the
    path's line shows around it."""
    x, y = at.tile(pos)
    inset = max(1.0, at.cell * 0.1)
    return x + inset, y + inset, at.cell - 2 * inset


def _frame(at: Layout, pos: Position) -> tuple[float, float, float, float]:
    """The agent's square frame around its tile: corner, side and line width."""
    width = max(2.0, at.cell * 0.1)
    x, y = at.tile(pos)
    return x + width / 2, y + width / 2, at.cell - width, width


# --- SVG -------------------------------------------------------------------------------------------------


def svg(run: Run, interactive: bool = False) -> str:
    """The whole run as one SVG document (``svg_parts`` joined)."""
    return "".join(svg_parts(run, interactive))


def svg_parts(run: Run, interactive: bool = False) -> Iterator[str]:
    """The whole run as one SVG document, in pieces to write one after the other (a long run's is never one
    string): its size grows with the maze, not with the number of actions.

    ``interactive`` (for the HTML animation) draws every tile as seen, with a fog shape over each tile that
    records the step it was first seen at (``data-seen``; -1: never), draws the path as one line per stretch
    between two tiles in the colour of the step that first walked it, and tags those lines, the failed-move
    crosses and the first-sight marks with their step (``data-step``), so a script can show the run at any step.
    """
    maze, at = run.maze, layout(run)
    first_seen = run.seen_at
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{at.width}" height="{at.height}" '
        f'viewBox="0 0 {at.width} {at.height}" font-family="sans-serif">',
        f"<title>{html.escape(run.title)}</title>",
        f'<rect width="{at.width}" height="{at.height}" fill="#ffffff"/>',
    ]
    parts += [
        f'<text class="{kind}" x="6" y="{y:.1f}" font-size="{size}" fill="{colour}">{html.escape(line)}</text>'
        for kind, y, size, colour, line in at.header
    ]
    parts.append('<g class="tiles" shape-rendering="crispEdges">')
    all_tiles = {(x, y) for y in range(maze.height) for x in range(maze.width)}
    for y, x0, length, fill in _row_runs(maze, all_tiles if interactive else first_seen):
        parts.append(
            f'<rect x="{x0 * at.cell}" y="{at.top + y * at.cell}" width="{length * at.cell}" '
            f'height="{at.cell}" fill="{fill}"/>'
        )
    parts.append("</g>")
    if interactive:
        parts.append('<g class="fog" shape-rendering="crispEdges">')
        for pos in sorted(all_tiles - run.start_seen, key=lambda p: (p[1], p[0])):
            wall = maze.cell(pos) == WALL
            x, y = at.tile(pos)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{at.cell}" height="{at.cell}" '
                f'fill="{WALL_UNSEEN if wall else OPEN_UNSEEN}" data-seen="{first_seen.get(pos, -1)}"/>'
            )
        parts.append("</g>")
    yield "\n".join(parts) + "\n"
    for part in _svg_marks(run, at, interactive):
        yield part + "\n"
    yield "</svg>\n"


def _trail(run: Run) -> Iterator[tuple[int, Position, Position]]:
    """Each stretch between two tiles, once, with the step that first walked it (the animation's lines: a run that
    walks a corridor a thousand times draws it once)."""
    walked: set[tuple[Position, Position]] = set()
    here = run.maze.start
    for k in range(len(run.steps)):
        there = run.steps.end(k)
        if there != here and (stretch := (min(here, there), max(here, there))) not in walked:
            walked.add(stretch)
            yield k + 1, here, there
        here = there


def _svg_marks(run: Run, at: Layout, interactive: bool) -> Iterator[str]:
    """The path, the wall hits and the first sight of the goal, then on top of them the start, the goal and
    the agent, so the path never hides them."""
    maze, cell = run.maze, at.cell
    line = max(1.5, cell * 0.18)
    style = f'fill="none" stroke-width="{line:.1f}" stroke-linejoin="round" stroke-linecap="round"'
    if interactive:
        yield '<g class="trail">'
        for n, start, end in _trail(run):
            (x1, y1), (x2, y2) = at.centre(start), at.centre(end)
            yield (
                f'<line data-step="{n}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                f'stroke="{_ramp((n - 1) / max(1, len(run.steps) - 1))}" {style}/>'
            )
        yield "</g>"
    else:
        for first, last, colour in _path_chunks(len(run.steps)):
            coords = " ".join("{:.1f},{:.1f}".format(*at.centre(p)) for p in run.stretch(first, last))
            steps = f"{first + 1}-{last}"
            yield f'<polyline class="path" data-steps="{steps}" stroke="{colour}" {style} points="{coords}"/>'
    for (tile, action), (_, number) in run.bumps.items():
        (bx, by), r = _bump_mark(tile, action, at)
        yield (
            f'<path class="bump" data-step="{number}" stroke="{BUMP}" '
            f'stroke-width="{max(1.5, cell * 0.08):.1f}" '
            f'd="M{bx - r:.1f},{by - r:.1f}L{bx + r:.1f},{by + r:.1f}'
            f'M{bx - r:.1f},{by + r:.1f}L{bx + r:.1f},{by - r:.1f}"/>'
        )
    parts = []
    sight = run.sight_position()
    if sight is not None:
        (sx, sy), (gx, gy) = at.centre(sight), at.centre(maze.goal)
        parts.append(
            f'<g class="goal-first-seen" data-step="{run.goal_first_seen_step}">'
            f'<line x1="{sx:.1f}" y1="{sy:.1f}" x2="{gx:.1f}" y2="{gy:.1f}" stroke="{SIGHT}" '
            f'stroke-width="{max(1.0, cell * 0.08):.1f}" stroke-dasharray="{cell * 0.25:.1f}"/>'
            f'<circle cx="{sx:.1f}" cy="{sy:.1f}" r="{cell * 0.42:.1f}" fill="none" stroke="{SIGHT}" '
            f'stroke-width="{max(1.5, cell * 0.12):.1f}"/></g>'
        )
    for pos, fill, label in ((maze.start, START_FILL, "S"), (maze.goal, GOAL_FILL, "G")):
        x, y, side = _badge(at, pos)
        cx, cy = at.centre(pos)
        parts.append(
            f'<g class="{"start" if label == "S" else "goal"}"><rect x="{x:.1f}" y="{y:.1f}" '
            f'width="{side:.1f}" height="{side:.1f}" rx="{side / 5:.1f}" fill="{fill}" stroke="#ffffff" '
            f'stroke-width="{max(1.0, cell * 0.04):.1f}"/><text x="{cx:.1f}" y="{cy:.1f}" '
            f'font-size="{side * 0.7:.1f}" font-weight="bold" text-anchor="middle" '
            f'dominant-baseline="central" fill="#ffffff">{label}</text></g>'
        )
    x, y, side, width = _frame(at, run.position(len(run.steps)))
    parts.append(
        f'<g id="agent" transform="translate(0,0)">'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{side:.1f}" height="{side:.1f}" fill="none" '
        f'stroke="#ffffff" stroke-width="{width * 2:.1f}"/>'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{side:.1f}" height="{side:.1f}" fill="none" '
        f'stroke="{INK}" stroke-width="{width:.1f}"/></g>'
    )
    yield from parts


# --- PNG and GIF (Pillow) --------------------------------------------------------------------------------


def _draw_path(pen, run: Run, at: Layout, start: int, end: int) -> None:
    """The path from after ``start`` actions to after ``end``, each stretch in its colour, with ``pen`` (a Pillow
    ``ImageDraw``): an animation draws each frame's new stretch onto the last frame's path, so a run of a million
    actions is walked once, not once a frame."""
    line = max(2, round(at.cell * 0.18))
    for first, last, colour in _path_chunks(len(run.steps)):
        if first < end and last > start:
            points = run.stretch(max(first, start), min(last, end))
            pen.line([at.centre(p) for p in points], fill=colour, width=line, joint="curve")


def _path_layer(run: Run, at: Layout):
    """A transparent image the path is drawn on, to lay over the tiles."""
    from PIL import Image

    return Image.new("RGBA", (at.width, at.height), (0, 0, 0, 0))


def _paint(run: Run, upto: int | None, at: Layout, path=None):
    """The run as a Pillow image, as it stood after ``upto`` actions (all by default); ``path``: the path up to
    there already drawn (``_path_layer``), else it is drawn here."""
    from PIL import Image, ImageDraw, ImageFont

    maze, cell = run.maze, at.cell
    upto = len(run.steps) if upto is None else upto
    image = Image.new("RGB", (at.width, at.height), "#ffffff")
    draw = ImageDraw.Draw(image)
    status_shown = False
    for kind, y, size, colour, text in at.header:
        if kind == "outcome" and upto < len(run.steps):  # an animation's frame says where it is instead
            text, status_shown = ("" if status_shown else f"step {upto} of {len(run.steps)}"), True
        draw.text((6, y), text, fill=colour, font=ImageFont.load_default(size), anchor="ls")
    seen = {pos for pos, step in run.seen_at.items() if step <= upto}
    for y, x0, length, fill in _row_runs(maze, seen):
        draw.rectangle((x0 * cell, at.top + y * cell, (x0 + length) * cell - 1, at.top + (y + 1) * cell - 1), fill=fill)
    if path is None:
        path = _path_layer(run, at)
        _draw_path(ImageDraw.Draw(path), run, at, 0, upto)
    image.paste(path, (0, 0), path)
    for (tile, action), (first, _) in run.bumps.items():
        if first > upto:
            continue
        (bx, by), r = _bump_mark(tile, action, at)
        stroke = max(2, round(cell * 0.08))
        draw.line((bx - r, by - r, bx + r, by + r), fill=BUMP, width=stroke)
        draw.line((bx - r, by + r, bx + r, by - r), fill=BUMP, width=stroke)
    sight, seen_at = run.sight_position(), run.goal_first_seen_step
    if sight is not None and seen_at is not None and seen_at <= upto:
        (sx, sy), r = at.centre(sight), cell * 0.42
        draw.line((sx, sy, *at.centre(maze.goal)), fill=SIGHT, width=max(1, round(cell * 0.08)))
        draw.ellipse((sx - r, sy - r, sx + r, sy + r), outline=SIGHT, width=max(2, round(cell * 0.12)))
    for pos, fill, label in ((maze.start, START_FILL, "S"), (maze.goal, GOAL_FILL, "G")):
        x, y, side = _badge(at, pos)
        draw.rounded_rectangle(
            (x, y, x + side, y + side),
            radius=max(1, side / 5),
            fill=fill,
            outline="#ffffff",
            width=max(1, round(cell * 0.04)),
        )
        draw.text(
            at.centre(pos),
            label,
            fill="#ffffff",
            anchor="mm",
            font=ImageFont.load_default(side * 0.7),
            stroke_width=max(0, side * 0.02),
            stroke_fill="#ffffff",
        )
    x, y, side, width = _frame(at, run.position(upto))
    draw.rectangle(
        (x - width, y - width, x + side + width, y + side + width), outline="#ffffff", width=max(1, round(width * 2))
    )
    draw.rectangle(
        (x - width / 2, y - width / 2, x + side + width / 2, y + side + width / 2),
        outline=INK,
        width=max(1, round(width)),
    )
    return image


def png(run: Run) -> bytes:
    buffer = io.BytesIO()
    _paint(run, None, layout(run)).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def frame_steps(steps: int, frames: int = GIF_FRAMES) -> list[int]:
    """The steps an animation shows: every step of a short run, else ``frames`` evenly spaced ones; always the
    start (0) and the end."""
    if steps + 1 <= frames:
        return list(range(steps + 1))
    return sorted({round(i * steps / (frames - 1)) for i in range(frames)})


def gif(run: Run) -> bytes:
    """An animated GIF: the run at evenly spaced steps, the last frame held."""
    from PIL import Image, ImageDraw

    at = layout(run, target_px=480)
    path, drawn, frames = _path_layer(run, at), 0, []
    pen = ImageDraw.Draw(path)
    for k in frame_steps(len(run.steps)):
        _draw_path(pen, run, at, drawn, k)
        drawn = k
        frames.append(_paint(run, k, at, path).convert("P", palette=Image.Palette.ADAPTIVE, colors=64))
    buffer = io.BytesIO()
    frames[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        loop=0,
        duration=[90] * (len(frames) - 1) + [2500],
    )
    return buffer.getvalue()


# --- HTML animation -----------------------------------------------------------------------------------------


def _json_for_script(data: object) -> str:
    """JSON that is safe inside a <script> element: no character of it can close the element or start markup."""
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _batched(pieces: Iterator[str], size: int = 4096) -> Iterator[str]:
    """Pieces of text joined ``size`` at a time: fewer, larger writes."""
    while batch := list(itertools.islice(pieces, size)):
        yield "".join(batch)


def animation_data(run: Run) -> Iterator[str]:
    """What the animation's script reads, as JSON in pieces that are safe inside a <script> element: positions (tile
    centres), the actions and each turn's model text (all as data). Written piece by piece, a run of a million
    actions is never one string."""
    at = layout(run)

    def centre(k: int) -> str:
        return json.dumps([round(c, 1) for c in at.centre(run.position(k))])

    def step(k: int) -> str:
        s = run.steps[k]
        fields = {"n": s.number, "turn": s.turn, "action": s.action, "from": s.start, "to": s.end}
        return _json_for_script({**fields, "success": s.success, "error": s.error, "reasoning": s.reasoning})

    yield '{"centres": ['
    yield from _batched(("," if k else "") + centre(k) for k in range(len(run.steps) + 1))
    yield '], "steps": ['
    yield from _batched(("," if k else "") + step(k) for k in range(len(run.steps)))
    yield '], "modelText": '
    yield _json_for_script({str(turn): text for turn, text in run.model_text.items()})
    yield "}"


def animation_html(run: Run) -> str:
    """The animation page (``animation_html_parts`` joined)."""
    return "".join(animation_html_parts(run))


def animation_html_parts(run: Run) -> Iterator[str]:
    """A self-contained page (no network): the maze, step controls, and for each step the action, its
    result, the reasoning and the turn's model text; below, the conversation (the transcript), whose turn of
    the current step is opened and outlined. In pieces to write one after the other."""
    conversation = (
        (f'<section id="conversation" aria-label="conversation"><h2>conversation</h2>\n{run.conversation}\n</section>')
        if run.conversation
        else '<section id="conversation" aria-label="conversation" hidden></section>'
    )
    values: dict[str, Iterable[str]] = {
        "title": [html.escape(run.title)],
        "outcome": [html.escape(run.outcome)],
        "controls": [CONTROLS],
        "svg": svg_parts(run, interactive=True),
        "data": animation_data(run),
        "conversation": [conversation],
        "css": [assets.text("animation.css"), assets.text("transcript.css")],
        "script": [assets.inline_script("animation.js"), "\n", assets.inline_script("transcript.js")],
    }
    # the template cut at its placeholders: text put in is never searched for placeholders again
    for n, piece in enumerate(re.split(r"\{(title|outcome|controls|svg|data|conversation|css|script)\}", _HTML)):
        yield from (values[piece] if n % 2 else [piece])


# Button icons drawn as SVG: font glyphs for these symbols are missing from some browsers' fonts (Debian's
# Chromium draws U+23EE and U+23ED as empty boxes).
_ICONS = {
    "first": '<rect x="3" y="3" width="2.2" height="10"/><path d="M14 3v10L6 8z"/>',
    "prev": '<path d="M10.5 3 5.5 8l5 5" fill="none" stroke="currentColor" stroke-width="2.4"/>',
    "play": '<path d="M4 2v12l10-6z"/>',
    "pause": '<rect x="4" y="3" width="3" height="10"/><rect x="9" y="3" width="3" height="10"/>',
    "next": '<path d="M5.5 3l5 5-5 5" fill="none" stroke="currentColor" stroke-width="2.4"/>',
    "last": '<path d="M2 3v10l8-5z"/><rect x="10.8" y="3" width="2.2" height="10"/>',
}


def _icon(name: str) -> str:
    return (
        f'<svg id="icon-{name}" viewBox="0 0 16 16" width="16" height="16" fill="currentColor" '
        f'aria-hidden="true">{_ICONS[name]}</svg>'
    )


_BUTTONS = "\n".join(
    f'  <button id="{name}" type="button" title="{tip}" aria-label="{tip}">{icons}</button>'
    for name, tip, icons in (
        ("first", "start (Home)", _icon("first")),
        ("prev", "previous step (Left)", _icon("prev")),
        ("play", "play or pause (Space)", _icon("play") + _icon("pause")),
        ("next", "next step (Right)", _icon("next")),
        ("last", "end (End)", _icon("last")),
    )
)

# The animation's controls (animation.js drives them): the static page and oriole view's experiment page show these.
CONTROLS = (
    """<div id="controls">
"""
    + _BUTTONS
    + """
  <input id="slider" type="range" min="0" value="0" aria-label="step">
  <label>step <input id="goto" type="number" min="0" value="0" aria-label="go to step"></label>
  <select id="speed" aria-label="speed"><option value="400">slow</option><option value="120" selected>normal</option>
  <option value="25">fast</option></select>
  <span id="counter"></span>
</div>
"""
)

_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
<h1>{title}</h1>
<p>{outcome}</p>
{controls}<div id="animation">
<div id="maze">
{svg}
</div>
<div id="panel">
  <div class="label">action</div><div id="action"></div>
  <div class="label">reasoning</div><pre id="reasoning"></pre>
  <div class="label">model text of this turn</div><pre id="model-text"></pre>
</div>
{conversation}
</div>
<script id="run-data" type="application/json">{data}</script>
{script}
</body>
</html>
"""


# --- writing files --------------------------------------------------------------------------------------


class UnknownFormat(OrioleError):
    """A file suffix no writer handles."""


WRITERS: dict[str, Callable[[Run], bytes | Iterable[str]]] = {
    ".png": png,
    ".svg": svg_parts,
    ".gif": gif,
    ".html": animation_html_parts,
}


def write(run: Run, targets: list[Path]) -> list[Path]:
    """Write the run in the format each target's suffix names (``WRITERS``); returns what was written. Text is
    written piece by piece as it is made."""
    unknown = sorted({path.suffix for path in targets} - set(WRITERS))
    if unknown:
        raise UnknownFormat(f"cannot write {', '.join(unknown) or 'files without a suffix'}; use {', '.join(WRITERS)}")
    for path in targets:
        content = WRITERS[path.suffix](run)
        files.make_folder(path.parent, files.OutputRefused, "the folder of a picture")
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            with path.open("w", encoding="utf-8") as out:
                out.writelines(content)
    return targets
