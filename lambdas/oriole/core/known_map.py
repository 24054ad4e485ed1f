"""What an agent has learned of a maze, one character per tile: the explorer baseline's memory, the map
compaction's (``oriole.core.memory``) and the map picture's (``oriole.core.picture``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from oriole.core.maze import DIRECTIONS, EMPTY, Position
from oriole.core.maze import GOAL as GOAL_CELL
from oriole.core.maze import WALL as WALL_CELL
from oriole.text import JsonObject

UNKNOWN, OPEN, WALL, GOAL = "?", ".", "#", "G"
MARK_OF_CELL = {EMPTY: OPEN, WALL_CELL: WALL, GOAL_CELL: GOAL}  # a maze cell as the map marks it
TEXT_LEGEND = f"{WALL} wall, {OPEN} open, {GOAL} goal, {UNKNOWN} not seen; row y, column x"  # the map as text


class KnownMap:
    """What an agent has learned of the maze, kept as one character per tile for a compact state."""

    def __init__(self, size: Iterable[int], text: str | None = None):
        self.width, self.height = size
        self.cells = list(text or UNKNOWN * (self.width * self.height))

    def __str__(self) -> str:
        return "".join(self.cells)

    def get(self, pos: Position) -> str:
        x, y = pos
        if not (0 <= x < self.width and 0 <= y < self.height):
            return WALL
        return self.cells[y * self.width + x]

    def set(self, pos: Position, value: str) -> None:
        x, y = pos
        if 0 <= x < self.width and 0 <= y < self.height:
            self.cells[y * self.width + x] = value

    def see(self, tiles: Iterable[Sequence[int]]) -> None:
        """What one sighting showed (an action's ``tiles_seen``: ``[x, y, cell]``)."""
        for x, y, cell in tiles:
            self.set((x, y), MARK_OF_CELL[cell])

    def rows(self) -> list[str]:
        """The map as text, one string per row (y), one character per tile (x)."""
        return ["".join(self.cells[y * self.width : (y + 1) * self.width]) for y in range(self.height)]

    def learn(self, observation: JsonObject) -> None:
        visible = observation.get("visible") or {}
        for kind, mark in (("open", OPEN), ("walls", WALL)):
            for x, y in visible.get(kind, ()):
                self.set((x, y), mark)
        if visible.get("goal"):
            self.set(tuple(visible["goal"]), GOAL)

    def open_neighbours(self, pos: Position) -> list[Position]:
        around = ((pos[0] + dx, pos[1] + dy) for dx, dy in DIRECTIONS.values())
        return [p for p in around if self.get(p) in (OPEN, GOAL)]

    def goal(self) -> Position | None:
        if GOAL not in self.cells:
            return None
        index = self.cells.index(GOAL)
        return index % self.width, index // self.width
