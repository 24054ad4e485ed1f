"""Mazes in the database: the shipped set (checked against the code on every load), seeded mazes stored on first
use and imported ones, found by name, id or grid."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from psycopg.rows import class_row, tuple_row
from psycopg.types.json import Jsonb

from oriole.core import mazeset
from oriole.core.maze import Maze
from oriole.core.mazeset import MazeEntry
from oriole.errors import OrioleError
from oriole.store.base import StoreBase
from oriole.text import ascii_int

MAX_MAZE_ID = 2**31 - 1  # mazes.id is an integer


class MazeSetMismatch(OrioleError):
    """The database holds a maze whose content differs from the maze set in the code."""


@dataclass(frozen=True)
class StoredMaze:
    id: int
    name: str
    maze: Maze
    shortest_path_length: int
    family: str
    content_hash: str


@dataclass(frozen=True)
class MazeRow:
    """A row of the ``mazes`` table as the store reads it (``MAZE_COLUMNS``)."""

    id: int
    name: str
    family: str
    start_x: int
    start_y: int
    goal_x: int
    goal_y: int
    shortest_path_length: int
    content_hash: str
    grid: list[list[int]]
    generator_version: str | None

    def stored(self) -> StoredMaze:
        maze = Maze.from_rows(self.grid, (self.start_x, self.start_y), (self.goal_x, self.goal_y))
        return StoredMaze(self.id, self.name, maze, self.shortest_path_length, self.family, self.content_hash)


MAZE_COLUMNS = ", ".join(field.name for field in fields(MazeRow))
_INSERT_MAZE = (
    "INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, shortest_path_length, "
    "generator, seed, content_hash, grid, source, generator_version) "
    "VALUES (coalesce(%(id)s, nextval('mazes_id_seq')), %(name)s, %(family)s, %(width)s, %(height)s, %(start_x)s, "
    "%(start_y)s, %(goal_x)s, %(goal_y)s, %(shortest_path_length)s, %(generator)s, %(seed)s, %(content_hash)s, "
    "%(grid)s, %(source)s, %(generator_version)s)"
)


def _maze_row(entry: MazeEntry, source: str) -> dict[str, Any]:
    maze = entry.maze
    return {
        "id": entry.id,
        "name": entry.name,
        "family": entry.family,
        "width": maze.width,
        "height": maze.height,
        "start_x": maze.start[0],
        "start_y": maze.start[1],
        "goal_x": maze.goal[0],
        "goal_y": maze.goal[1],
        "shortest_path_length": entry.shortest_path_length,
        "generator": entry.generator,
        "seed": None if source == "imported" else entry.seed,
        "content_hash": entry.content_hash,
        "grid": Jsonb(maze.grid),
        "source": source,
        "generator_version": None if source == "imported" else mazeset.GENERATOR_VERSION,
    }


class Mazes(StoreBase):
    """The ``mazes`` table."""

    def load_mazes(self, entries: Iterable[MazeEntry]) -> int:
        """Insert the shipped set (idempotent) and check stored mazes match it; returns how many were new."""
        entries = list(entries)
        with self.conn.transaction():
            with self.conn.cursor() as cur:
                cur.executemany(
                    _INSERT_MAZE + " ON CONFLICT (id) DO NOTHING RETURNING id",
                    [_maze_row(e, "shipped") for e in entries],
                    returning=True,
                )
                inserted = 0
                while True:
                    inserted += len(cur.fetchall())
                    if not cur.nextset():
                        break
            stored = {
                id_: (name, content_hash)
                for id_, name, content_hash in self.conn.cursor(row_factory=tuple_row).execute(
                    "SELECT id, name, content_hash FROM mazes"
                )
            }
        for e in entries:
            name, content_hash = stored[e.id]
            if (name, content_hash) != (e.name, e.content_hash):
                raise MazeSetMismatch(
                    f"maze {e.id} is stored as {name} ({content_hash[:12]}) but the code "
                    f"generates {e.name} ({e.content_hash[:12]}); mazes must never change under stored runs"
                )
        return inserted

    def holds_maze_set(self) -> bool:
        """Whether every shipped maze is stored as the code pins it (id, name, content hash): then loading the set
        would change nothing, and generating it (a third of a second, the shortest paths searched) is skipped."""
        stored = self.conn.cursor(row_factory=tuple_row).execute(
            "SELECT id, name, content_hash FROM mazes WHERE source = 'shipped'"
        )
        return mazeset.pinned_set() <= set(stored)

    def find_maze(self, key: str | int) -> StoredMaze | None:
        """A stored maze by name (a seeded one by its canonical name), or by id (an int, or a string of ASCII
        digits as a CLI or an input passes it)."""
        number = key if isinstance(key, int) else ascii_int(key, 18, signed=False)
        if number is not None and not 0 <= number <= MAX_MAZE_ID:
            return None  # no maze has such an id (and the column could not even hold it)
        by_id = number is not None
        row = self._one(
            class_row(MazeRow),
            f"SELECT {MAZE_COLUMNS} FROM mazes WHERE {'id' if by_id else 'name'} = %s",
            (number if by_id else mazeset.canonical_name(str(key)),),
        )
        return None if row is None else row.stored()

    def add_maze(self, entry: MazeEntry, source: str) -> StoredMaze:
        """Store a seeded or imported maze under its name and return it as stored; storing it again returns
        the stored one. A name already stored with another grid is refused: a maze never changes under runs."""
        row = self._one(
            class_row(MazeRow),
            _INSERT_MAZE + f" ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING {MAZE_COLUMNS}",
            _maze_row(entry, source),
        )
        assert row is not None, "an INSERT ... ON CONFLICT DO UPDATE ... RETURNING returns its row"
        if row.content_hash != entry.content_hash:
            raise MazeSetMismatch(
                f"maze {entry.name} is stored with another grid ({row.content_hash[:12]}, "
                f"generator version {row.generator_version}) than the one drawn now "
                f"({entry.content_hash[:12]}, version {mazeset.GENERATOR_VERSION})"
            )
        return row.stored()

    def maze_with_grid(self, content_hash: str) -> StoredMaze | None:
        """A stored maze with exactly this grid, start and goal (importing it again is a no-op)."""
        row = self._one(
            class_row(MazeRow),
            f"SELECT {MAZE_COLUMNS} FROM mazes WHERE content_hash = %s ORDER BY id LIMIT 1",
            (content_hash,),
        )
        return None if row is None else row.stored()
