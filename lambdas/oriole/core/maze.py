"""The maze rules: the grid, moves, vision, recall and the goal condition.

Everything an agent can experience of a maze is decided here, as pure functions over plain data,
so the rules are tested without a database or a model and every provider plays the same game.

Coordinates are ``(x, y)``; ``grid[y][x]`` holds 0 (empty), 1 (wall) or 2 (goal). North is ``y - 1``.
Outside the grid counts as wall.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import NamedTuple

from oriole.text import JsonObject

EMPTY, WALL, GOAL = 0, 1, 2
Position = tuple[int, int]

DIRECTIONS: dict[str, Position] = {
    "north": (0, -1),
    "south": (0, 1),
    "east": (1, 0),
    "west": (-1, 0),
}

GOAL_CONDITIONS = ("reach", "sight")


class InvalidMaze(ValueError):
    """A maze definition breaks a rule every experiment relies on (shape, start, goal, reachability)."""


class Tile(NamedTuple):
    """One tile an agent saw: its position and what is there; as a sequence, ``[x, y, cell]`` (what ``group_tiles``
    reads). A named tuple: every action sees up to 4 x visionRange + 1 of them, and building them as frozen
    dataclasses was a third of an observation's time."""

    x: int
    y: int
    cell: int

    def as_list(self) -> list[int]:
        return [self.x, self.y, self.cell]


@dataclass(frozen=True)
class Maze:
    """An immutable maze: the grid plus where the agent starts and where the goal is."""

    grid: tuple[tuple[int, ...], ...]
    start: Position
    goal: Position

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]], start: Position, goal: Position) -> Maze:
        return cls(tuple(tuple(int(c) for c in row) for row in rows), (start[0], start[1]), (goal[0], goal[1]))

    @cached_property
    def width(self) -> int:
        return len(self.grid[0]) if self.grid else 0

    @cached_property
    def height(self) -> int:
        return len(self.grid)

    def inside(self, pos: Position) -> bool:
        x, y = pos
        return 0 <= x < self.width and 0 <= y < self.height

    def cell(self, pos: Position) -> int:
        """The cell at ``pos``; anything outside the grid is a wall."""
        if not self.inside(pos):
            return WALL
        return self.grid[pos[1]][pos[0]]

    def passable(self, pos: Position) -> bool:
        return self.cell(pos) != WALL

    def neighbours(self, pos: Position) -> Iterable[Position]:
        for dx, dy in DIRECTIONS.values():
            nxt = (pos[0] + dx, pos[1] + dy)
            if self.passable(nxt):
                yield nxt

    def shortest_path(self) -> list[Position] | None:
        """Positions from start to goal (both included) on a shortest path, or None if unreachable."""
        return shortest_path(self.start, self.goal.__eq__, self.neighbours)

    def shortest_path_length(self) -> int | None:
        """The number of moves on a shortest path from start to goal."""
        path = self.shortest_path()
        return None if path is None else len(path) - 1

    def content_hash(self) -> str:
        """A SHA-256 over grid, start and goal: two mazes with the same hash play identically."""
        payload = json.dumps({"grid": self.grid, "start": self.start, "goal": self.goal}, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()

    def validate(self) -> int:
        """Check the maze is playable and return its shortest-path length; raise InvalidMaze otherwise."""
        if self.height == 0 or any(len(row) != self.width for row in self.grid):
            raise InvalidMaze("the grid must be a non-empty rectangle")
        bad = {c for row in self.grid for c in row} - {EMPTY, WALL, GOAL}
        if bad:
            raise InvalidMaze(f"cells must be 0, 1 or 2; found {sorted(bad)}")
        goals = [(x, y) for y, row in enumerate(self.grid) for x, c in enumerate(row) if c == GOAL]
        if goals != [self.goal]:
            raise InvalidMaze(f"the grid must hold exactly one goal cell at {self.goal}; found {goals}")
        if not self.inside(self.start) or not self.passable(self.start):
            raise InvalidMaze(f"start {self.start} is a wall or outside the grid")
        if self.start == self.goal:
            raise InvalidMaze("start and goal are the same tile")
        length = self.shortest_path_length()
        if length is None:
            raise InvalidMaze(f"goal {self.goal} is not reachable from start {self.start}")
        return length


def shortest_path(
    start: Position, is_target: Callable[[Position], bool], neighbours: Callable[[Position], Iterable[Position]]
) -> list[Position] | None:
    """Breadth-first search from ``start`` to the nearest position where ``is_target`` holds.

    Returns the path (both ends included) or None. Any neighbour function works, so agents search
    the map they know and the maze set searches the true grid with the same code.
    """
    came_from: dict[Position, Position | None] = {start: None}
    queue = deque([start])
    while queue:
        pos = queue.popleft()
        if is_target(pos):
            path, previous = [pos], came_from[pos]
            while previous is not None:
                path.append(previous)
                previous = came_from[previous]
            return path[::-1]
        for nxt in neighbours(pos):
            if nxt not in came_from:
                came_from[nxt] = pos
                queue.append(nxt)
    return None


def move(maze: Maze, pos: Position, direction: str) -> tuple[Position, bool]:
    """Try one step; a wall or the grid edge leaves the agent where it is and the move fails."""
    dx, dy = DIRECTIONS[direction]
    target = (pos[0] + dx, pos[1] + dy)
    if maze.passable(target):
        return target, True
    return pos, False


def vision(maze: Maze, pos: Position, vision_range: int) -> list[Tile]:
    """The agent's own tile plus four cardinal rays of ``vision_range`` tiles.

    A ray includes the first wall it meets and stops there; it also stops at the grid edge
    (nothing outside the grid is ever reported).
    """
    grid, width, height = maze.grid, maze.width, maze.height  # every action looks: read once, not per tile
    tiles = [Tile(pos[0], pos[1], maze.cell(pos))]
    for dx, dy in DIRECTIONS.values():
        x, y = pos
        for _ in range(vision_range):
            x, y = x + dx, y + dy
            if not (0 <= x < width and 0 <= y < height):
                break
            cell = grid[y][x]
            tiles.append(Tile(x, y, cell))
            if cell == WALL:
                break
    return tiles


def goal_visible(tiles: Iterable[Tile]) -> bool:
    return any(tile.cell == GOAL for tile in tiles)


def goal_met(condition: str, maze: Maze, pos: Position, tiles: Iterable[Tile]) -> bool:
    """``reach``: the agent stands on the goal. ``sight``: the goal is among the tiles it sees."""
    if condition == "reach":
        return pos == maze.goal
    if condition == "sight":
        return goal_visible(tiles)
    raise ValueError(f"unknown goal condition {condition!r}; expected one of {GOAL_CONDITIONS}")


def goal_condition_holds(condition: str, maze: Maze, vision_range: int) -> Callable[[Position], bool]:
    """Whether the goal condition holds at a position (what ``goal_met`` decides after a move there): standing on
    the goal (``reach``), or seeing it under the vision rules with ``vision_range`` (``sight``)."""
    if condition == "reach":
        return maze.goal.__eq__
    if condition == "sight":  # sight is mutual: the goal's own rays reach exactly the tiles that see it
        seen_from = frozenset((t.x, t.y) for t in vision(maze, maze.goal, vision_range) if t.cell != WALL)
        return seen_from.__contains__
    raise ValueError(f"unknown goal condition {condition!r}; expected one of {GOAL_CONDITIONS}")


@lru_cache(maxsize=16)
def moves_to_goal_condition(condition: str, maze: Maze, vision_range: int) -> dict[Position, int]:
    """For every open tile, the fewest moves from it to a tile where the goal condition holds (0 there): one
    breadth-first search outwards from those tiles, kept for the mazes in play (an oracle asks at every step)."""
    holds = goal_condition_holds(condition, maze, vision_range)
    targets = [(x, y) for y in range(maze.height) for x in range(maze.width) if maze.passable((x, y)) and holds((x, y))]
    distance = dict.fromkeys(targets, 0)
    queue = deque(targets)
    while queue:
        pos = queue.popleft()
        for nxt in maze.neighbours(pos):  # moves between open tiles go both ways
            if nxt not in distance:
                distance[nxt] = distance[pos] + 1
                queue.append(nxt)
    return distance


def optimal_moves(condition: str, maze: Maze, vision_range: int, start: Position | None = None) -> list[str]:
    """The directions of a shortest run from ``start`` (the maze's start) to the goal condition: the fewest moves
    that change position, then the fewest moves. ``reach``: a shortest path to the goal; ``sight``: a shortest
    path to the nearest tile from which the goal is seen. The condition is judged after each move, so where it
    already holds at the start one move is still needed: into a wall or the edge next to the start (the position
    does not change), else one step towards the goal (which keeps it in sight)."""
    pos = maze.start if start is None else start
    distance = moves_to_goal_condition(condition, maze, vision_range)
    if pos not in distance:
        raise InvalidMaze(f"the goal condition {condition!r} cannot be met from {pos}")
    if distance[pos] == 0:
        blocked = [d for d, (dx, dy) in DIRECTIONS.items() if not maze.passable((pos[0] + dx, pos[1] + dy))]
        if blocked:
            return blocked[:1]
        distance = moves_to_goal_condition("reach", maze, vision_range)
        return [next(d for d, nxt in _steps(maze, pos) if distance[nxt] < distance[pos])]
    moves = []
    while distance[pos] > 0:
        direction, pos = next((d, nxt) for d, nxt in _steps(maze, pos) if distance[nxt] == distance[pos] - 1)
        moves.append(direction)
    return moves


def _steps(maze: Maze, pos: Position) -> Iterable[tuple[str, Position]]:
    """The moves from ``pos`` that change position, with where each leads."""
    for direction, (dx, dy) in DIRECTIONS.items():
        nxt = (pos[0] + dx, pos[1] + dy)
        if maze.passable(nxt):
            yield direction, nxt


def optimal_path_length(condition: str, maze: Maze, vision_range: int) -> int:
    """The moves that change position on a shortest run from the start (``optimal_moves``; 0 when a move into a
    wall meets the condition): what a run's ``path_length`` is measured against, so no efficiency exceeds 1."""
    moves = optimal_moves(condition, maze, vision_range)
    return len(moves) if move(maze, maze.start, moves[0])[1] else 0


def recall_moves_remaining(moves: int, moves_at_last_recall: int | None, interval: int) -> int:
    """Moves still needed before ``recall_all`` may be used again (0 means it is allowed now)."""
    if moves_at_last_recall is None:
        return 0
    return max(0, interval - (moves - moves_at_last_recall))


_ROW_MAJOR = itemgetter(1, 0)  # a tile's (y, x): the order a model reads tiles in


def group_tiles(tiles: Iterable[Sequence[int]]) -> JsonObject:
    """Tiles (``[x, y, cell]``) grouped the way a model reads them: open tiles, walls and the goal."""
    by_kind: dict[int, list[list[int]]] = {EMPTY: [], WALL: [], GOAL: []}
    for x, y, cell in sorted(tiles, key=_ROW_MAJOR):
        by_kind[cell].append([x, y])
    return {"open": by_kind[EMPTY], "walls": by_kind[WALL], "goal": by_kind[GOAL][0] if by_kind[GOAL] else None}


def recall_summary(memories: Sequence[tuple[Position, Iterable[Sequence[int]]]]) -> JsonObject:
    """Condense the last actions' positions and sightings into what ``recall_all`` returns.

    ``memories`` holds, oldest first, each action's resulting position and the tiles it saw
    (``[x, y, cell]``). The answer lists the positions visited (in order, without consecutive
    repeats) and every tile seen, grouped as open tiles, walls and the goal.
    """
    visited: list[list[int]] = []
    seen: dict[Position, int] = {}
    for pos, tiles in memories:
        if not visited or visited[-1] != list(pos):
            visited.append(list(pos))
        for x, y, cell in tiles:
            seen[(x, y)] = cell
    return {"visited": visited, **group_tiles([x, y, cell] for (x, y), cell in seen.items())}
