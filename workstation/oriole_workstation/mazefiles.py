"""Mazes from files, for ``oriole mazes import``: a JSON grid or a text grid, checked before anything is stored.

JSON: an object with ``grid`` (or ``grid_data``, the public Oriole project's key): rows top to bottom, 0 open,
1 wall, 2 goal; optional ``name``, ``start`` ``[x, y]`` and ``goal`` ``[x, y]``. Text: one row per line,
``#`` wall, ``.`` open, ``S`` start (open), ``G`` goal. ``--start`` and ``--goal`` override what the file says.
A maze is refused, with the reason, when it is not a rectangle of known cells, exceeds ``MAX_SIZE``, has its
start or goal on a wall or outside the grid, or its goal cannot be reached from its start.
"""

from __future__ import annotations

import re
from pathlib import Path

from oriole.core.maze import EMPTY, GOAL, WALL, InvalidMaze, Maze, Position
from oriole.core.mazeset import MAX_SIZE, SEEDED_NAME, MazeEntry
from oriole.errors import OrioleError
from oriole.text import NestedTooDeeply, load_json
from oriole_workstation import files

MAX_FILE_BYTES = 4 * 1024 * 1024
NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")  # matched whole (fullmatch): "$" lets a final line break through
TEXT_CELLS = {"#": WALL, ".": EMPTY, "S": EMPTY, "G": GOAL}
IMPORTED = "imported"  # the family (and generator) of every imported maze


class MazeFileError(OrioleError):
    """A maze file that cannot be imported; the message says what is wrong with it."""


def read(path: Path, name: str | None = None, start: Position | None = None, goal: Position | None = None) -> MazeEntry:
    """The maze a file describes, validated, as an entry to store (the database numbers it)."""
    data = _text(path)
    if data.lstrip().startswith("{"):
        grid, found_start, found_goal, file_name = _from_json(path, data)
    else:
        grid, found_start, found_goal, file_name = _from_text(path, data)
    maze_name = name or file_name or path.stem
    if not NAME.fullmatch(maze_name) or maze_name.isdigit() or SEEDED_NAME.fullmatch(maze_name):
        raise MazeFileError(
            f"maze name {maze_name!r} must be 1-64 letters, digits, '.', '_' or '-', not all digits "
            "(that reads as an id) and not of the seeded form FAMILY-SIZE@SEED; choose one with "
            "--name"
        )
    return _entry(path, maze_name, grid, start or found_start, goal or found_goal)


def _text(path: Path) -> str:
    return files.read_text(path, MAX_FILE_BYTES, MazeFileError, f"a maze of {MAX_SIZE}x{MAX_SIZE} is far smaller")


def _from_json(path: Path, text: str) -> tuple[list[list[int]], Position | None, Position | None, str | None]:
    try:
        data = load_json(text, long_integers=False)
    except NestedTooDeeply as error:
        raise MazeFileError(f"{path} is JSON {error}; a maze file nests two levels (rows of cells)") from None
    except ValueError as error:
        raise MazeFileError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise MazeFileError(f"{path}: expected a JSON object with 'grid' (or 'grid_data')")
    grid = data.get("grid", data.get("grid_data"))
    if not isinstance(grid, list) or not all(isinstance(row, list) for row in grid):
        raise MazeFileError(f"{path}: expected 'grid' (or 'grid_data'): a list of rows, each a list of 0, 1, 2")
    if any(type(cell) is not int or cell not in (EMPTY, WALL, GOAL) for row in grid for cell in row):
        raise MazeFileError(f"{path}: cells must be 0 (open), 1 (wall) or 2 (goal)")
    name = data.get("name")
    return (
        grid,
        _position(data.get("start"), "start"),
        _position(data.get("goal"), "goal"),
        name if isinstance(name, str) else None,
    )


def _position(value: object, what: str) -> Position | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
        raise MazeFileError(f"'{what}' must be [x, y] with integers; got {value!r}")
    return value[0], value[1]


def _from_text(path: Path, text: str) -> tuple[list[list[int]], Position | None, Position | None, None]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    unknown = sorted({char for line in lines for char in line} - set(TEXT_CELLS))
    if unknown:
        raise MazeFileError(f"{path}: a text maze uses only # . S G; found {''.join(unknown)!r}")
    starts = [(x, y) for y, line in enumerate(lines) for x, char in enumerate(line) if char == "S"]
    if len(starts) > 1:
        raise MazeFileError(f"{path}: more than one start S at {starts}")
    return [[TEXT_CELLS[char] for char in line] for line in lines], (starts[0] if starts else None), None, None


def _entry(path: Path, name: str, grid: list[list[int]], start: Position | None, goal: Position | None) -> MazeEntry:
    height, width = len(grid), len(grid[0]) if grid else 0
    if not height or any(len(row) != width for row in grid):
        raise MazeFileError(f"{path}: the grid is not a rectangle (every row must have the same length)")
    if max(width, height) > MAX_SIZE:
        raise MazeFileError(f"{path}: {width}x{height} exceeds the largest maze, {MAX_SIZE}x{MAX_SIZE}")
    if start is None:
        raise MazeFileError(f"{path} gives no start: pass --start X,Y")
    rows = [list(row) for row in grid]
    goal = _goal(path, rows, goal)
    for what, (x, y) in (("start", start), ("goal", goal)):
        if not (0 <= x < width and 0 <= y < height):
            raise MazeFileError(f"{path}: the {what} ({x}, {y}) is outside the {width}x{height} grid")
        if rows[y][x] == WALL:
            raise MazeFileError(f"{path}: the {what} ({x}, {y}) is a wall")
    rows[goal[1]][goal[0]] = GOAL
    maze = Maze.from_rows(rows, start, goal)
    try:
        length = maze.validate()
    except InvalidMaze as error:
        raise MazeFileError(f"{path}: {error}") from None
    return MazeEntry(None, name, IMPORTED, IMPORTED, 0, maze, length, maze.content_hash())


def _goal(path: Path, rows: list[list[int]], goal: Position | None) -> Position:
    """The goal: the one goal cell of the grid, or the one given (which must agree with a goal cell, if any)."""
    marked = [(x, y) for y, row in enumerate(rows) for x, cell in enumerate(row) if cell == GOAL]
    if len(marked) > 1:
        raise MazeFileError(f"{path}: more than one goal cell at {marked}; a maze has one goal")
    if goal is None:
        if not marked:
            raise MazeFileError(f"{path} marks no goal: pass --goal X,Y")
        return marked[0]
    if marked and marked[0] != goal:
        raise MazeFileError(f"{path} marks the goal at {marked[0]} but --goal says {goal}")
    return goal
