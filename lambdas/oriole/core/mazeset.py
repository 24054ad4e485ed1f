"""The maze families and the project's fixed maze set, every maze generated from a seed.

Two kinds of names: the shipped set (``sparse-60``, ``perfect-11``, ...), fixed and pinned below, and
seeded names ``FAMILY-SIZE@SEED`` (``perfect-11@42``) that name the maze a family's generator draws at that
size from that seed, the same grid on every machine and every code version that keeps
``GENERATOR_VERSION``. A seeded draw is validated; one that is not playable is drawn again from a derived
seed, deterministically, so an unsolvable maze is never produced. The database is the source of truth for
the mazes experiments use: the shipped set is loaded at migration, seeded mazes are stored on first use,
and imported ones (``oriole mazes import``) sit beside them.

Stored experiments refer to mazes by name and id, so the set must never change under them: each
entry has a fixed seed, every generator draws only from its own ``random.Random(seed)`` (only
``random``, ``randrange``, ``shuffle`` and ``choice``, which give the same numbers on every CPython
3.x we run), and the table pins each maze's content hash. A generator change that alters a maze
fails loudly at generation instead of silently changing what old results mean.

Random-wall families never put a wall on a winding start-to-goal path they draw first, so the
goal is reachable by construction; the structured families (spiral, rooms, perfect mazes) are
connected by the way they are carved. Every maze is still validated as it is generated.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import NamedTuple

from oriole import errors
from oriole.core.maze import EMPTY, GOAL, WALL, InvalidMaze, Maze, Position
from oriole.text import JsonObject, ascii_int

SIZE = 60
_STEPS = ((0, -1), (1, 0), (0, 1), (-1, 0))
_DIAGONALS = ((1, 1), (1, -1))


GENERATOR_VERSION = "1"  # bump when a generator's draws change: stored mazes keep the version they came from
MAX_SIZE = 201  # the largest side of a generated or imported maze
# FAMILY-SIZE@SEED, in ASCII digits; leading zeros are allowed and dropped (``canonical_name``)
SEEDED_NAME = re.compile(r"(?P<family>[a-z]+(?:-[a-z]+)*)-(?P<size>[0-9]{1,40})@(?P<seed>[0-9]{1,40})")  # fullmatch
MAX_SEED = 10**18 - 1
_DRAWS = 50  # attempts of a seeded family before giving up (none of the shipped families ever needs a second)


@dataclass(frozen=True)
class MazeEntry:
    """One maze with what experiments record about it (generator, seed, optimum, hash); ``id`` is None for a
    maze the database has not numbered yet (a seeded or imported one)."""

    id: int | None  # the shipped set's ids are stable small integers, never reused
    name: str  # e.g. "sparse-60"
    family: str  # e.g. "sparse", "perfect"
    generator: str  # name of the generator function used, e.g. "random_walls"
    seed: int
    maze: Maze
    shortest_path_length: int
    content_hash: str  # maze.content_hash()


class MazeSetChanged(errors.OrioleError):
    """A regenerated maze differs from its pinned hash: a generator change would alter stored mazes."""


# --- helpers shared by the generators -------------------------------------------------------------


def _maze(rows: list[list[int]], start: Position, goal: Position) -> Maze:
    """Mark the goal cell and freeze the grid."""
    rows[goal[1]][goal[0]] = GOAL
    return Maze.from_rows(rows, start, goal)


def _rows_with_walls(size: int, walls: set[Position]) -> list[list[int]]:
    return [[WALL if (x, y) in walls else EMPTY for x in range(size)] for y in range(size)]


def _corners(rng: random.Random, size: int, margin: int = 5) -> tuple[Position, Position]:
    """A start near the top-left corner and a goal near the bottom-right one."""
    start = (rng.randrange(margin), rng.randrange(margin))
    goal = (size - 1 - rng.randrange(margin), size - 1 - rng.randrange(margin))
    return start, goal


def _kept_path(rng: random.Random, start: Position, goal: Position, size: int, waypoints: int = 3) -> set[Position]:
    """Cells of a winding start-to-goal path through random waypoints.

    Random walls are never placed on these cells, which makes the goal reachable without retries.
    """
    points = [start, *((rng.randrange(size), rng.randrange(size)) for _ in range(waypoints)), goal]
    cells = {start}
    for (x, y), (tx, ty) in pairwise(points):
        while (x, y) != (tx, ty):
            dx, dy = abs(tx - x), abs(ty - y)
            if rng.randrange(dx + dy) < dx:
                x += 1 if tx > x else -1
            else:
                y += 1 if ty > y else -1
            cells.add((x, y))
    return cells


def _carve_perfect(rng: random.Random, cells_wide: int, cells_high: int) -> list[list[int]]:
    """A perfect maze by recursive backtracking: cells at odd coordinates, walls between and around."""
    rows = [[WALL] * (2 * cells_wide + 1) for _ in range(2 * cells_high + 1)]
    rows[1][1] = EMPTY
    stack, visited = [(0, 0)], {(0, 0)}
    while stack:
        cx, cy = stack[-1]
        options = [
            (cx + dx, cy + dy)
            for dx, dy in _STEPS
            if 0 <= cx + dx < cells_wide and 0 <= cy + dy < cells_high and (cx + dx, cy + dy) not in visited
        ]
        if not options:
            stack.pop()
            continue
        nx, ny = rng.choice(options)
        rows[cy + ny + 1][cx + nx + 1] = EMPTY  # the wall between the two cells
        rows[2 * ny + 1][2 * nx + 1] = EMPTY
        visited.add((nx, ny))
        stack.append((nx, ny))
    return rows


# --- one generator per family ---------------------------------------------------------------------


def _random_walls(rng: random.Random, density: float, size: int = SIZE) -> Maze:
    """Exactly ``density`` of all cells are walls, uniformly placed off a kept winding path."""
    start, goal = _corners(rng, size)
    kept = _kept_path(rng, start, goal, size)
    free = [(x, y) for y in range(size) for x in range(size) if (x, y) not in kept]
    rng.shuffle(free)
    walls = set(free[: round(density * size * size)])
    return _maze(_rows_with_walls(size, walls), start, goal)


def _open_field(rng: random.Random, obstacles: int, size: int = SIZE) -> Maze:
    """A few small rectangular obstacles on open ground; start on the west edge, goal on the east."""
    start, goal = (0, rng.randrange(size)), (size - 1, rng.randrange(size))
    kept = _kept_path(rng, start, goal, size)
    walls: set[Position] = set()
    for _ in range(obstacles):
        x, y, w, h = rng.randrange(size), rng.randrange(size), 1 + rng.randrange(4), 1 + rng.randrange(4)
        walls |= {(x + i, y + j) for i in range(w) for j in range(h) if x + i < size and y + j < size}
    return _maze(_rows_with_walls(size, walls - kept), start, goal)


def _diagonal_walls(rng: random.Random, density: float, size: int = SIZE) -> Maze:
    """Short diagonal wall segments (impassable: moves are 4-way); start bottom-left, goal top-right."""
    (sx, sy), (gx, gy) = _corners(rng, size)
    start, goal = (sx, size - 1 - sy), (gx, size - 1 - gy)
    kept = _kept_path(rng, start, goal, size)
    walls: set[Position] = set()
    while len(walls) < density * size * size:
        x, y, (dx, dy) = rng.randrange(size), rng.randrange(size), rng.choice(_DIAGONALS)
        for i in range(4 + rng.randrange(9)):
            cell = (x + i * dx, y + i * dy)
            if 0 <= cell[0] < size and 0 <= cell[1] < size and cell not in kept:
                walls.add(cell)
    return _maze(_rows_with_walls(size, walls), start, goal)


def _scatter_blobs(rng: random.Random, density: float, size: int = SIZE) -> Maze:
    """Irregular wall blobs, each grown cell by cell from a random seed cell."""
    start, goal = _corners(rng, size)
    kept = _kept_path(rng, start, goal, size)
    walls: set[Position] = set()
    while len(walls) < density * size * size:
        blob = [(rng.randrange(size), rng.randrange(size))]
        for _ in range(3 + rng.randrange(18)):
            (x, y), (dx, dy) = rng.choice(blob), rng.choice(_STEPS)
            if 0 <= x + dx < size and 0 <= y + dy < size:
                blob.append((x + dx, y + dy))
        walls |= set(blob) - kept
    return _maze(_rows_with_walls(size, walls), start, goal)


def _spiral(rng: random.Random, corridor: int, size: int = SIZE) -> Maze:
    """One corridor spiralling inwards from an outer corner (the start) to the goal near the centre.

    The seed only picks which corner and which way round (a mirror and/or a transpose).
    """
    rows = [[WALL] * size for _ in range(size)]
    x = y = 0
    heading, first = 0, size - corridor
    lengths = [first] + [first - step * (corridor + 1) for step in range(size) for _ in (0, 1)]
    for length in lengths:  # east, south, west, north, east, ... shrinking every second turn
        if length <= 0:
            break
        dx, dy = ((1, 0), (0, 1), (-1, 0), (0, -1))[heading % 4]
        for _ in range(length + 1):
            for j in range(corridor):
                rows[y + j][x : x + corridor] = [EMPTY] * corridor
            x, y = x + dx, y + dy
        x, y, heading = x - dx, y - dy, heading + 1
    start, goal = (0, 0), (x, y)
    flip_x, flip_y, transpose = rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5

    def place(pos: Position) -> Position:
        px = size - 1 - pos[0] if flip_x else pos[0]
        py = size - 1 - pos[1] if flip_y else pos[1]
        return (py, px) if transpose else (px, py)

    walls = {place((cx, cy)) for cy, row in enumerate(rows) for cx, c in enumerate(row) if c == WALL}
    return _maze(_rows_with_walls(size, walls), place(start), place(goal))


def _spiral_with_gaps(rng: random.Random, corridor: int, gaps: int, size: int = SIZE) -> Maze:
    """A spiral (see ``_spiral``) with ``gaps`` openings in the one-tile walls between its rings: shortcuts that
    make every seed a different maze (a bare spiral only has eight orientations)."""
    maze = _spiral(rng, corridor, size)
    rows = [list(row) for row in maze.grid]
    thin = [
        (x, y)
        for y in range(1, size - 1)
        for x in range(1, size - 1)
        if rows[y][x] == WALL
        and ((rows[y][x - 1] != WALL and rows[y][x + 1] != WALL) or (rows[y - 1][x] != WALL and rows[y + 1][x] != WALL))
    ]
    rng.shuffle(thin)  # shuffle, not sample: the draws the module docstring guarantees stay the same
    for x, y in thin[:gaps]:
        rows[y][x] = EMPTY
    return Maze.from_rows(rows, maze.start, maze.goal)


def _rooms(rng: random.Random, room: int, size: int = SIZE) -> Maze:
    """Rooms by recursive division: each dividing wall gets doors, then both halves are divided again.

    Walls lie on odd rows/columns and doors on even ones, so a later wall never blocks an earlier door
    and every room is reachable. Start top-left, goal bottom-right (even cells, never walls).
    """
    rows = [[EMPTY] * size for _ in range(size)]
    chambers = [(0, 0, size - 1, size - 1)]  # inclusive x0, y0, x1, y1; x0 and y0 are always even
    while chambers:
        x0, y0, x1, y1 = chambers.pop()
        vertical = x1 - x0 > y1 - y0 or (x1 - x0 == y1 - y0 and rng.random() < 0.5)
        lo, hi = (x0, x1) if vertical else (y0, y1)
        if hi - lo < room:
            continue
        cut = rng.choice(range(lo + 3, hi - 2, 2))  # odd, leaving at least three cells each side
        across = range(y0, y1 + 1) if vertical else range(x0, x1 + 1)
        doors = list(range(across.start, across.stop, 2))
        rng.shuffle(doors)  # one door, two in a long wall so that some rooms have two ways in
        for along in set(across) - set(doors[: 1 if len(across) < 20 else 2]):
            if vertical:
                rows[along][cut] = WALL
            else:
                rows[cut][along] = WALL
        if vertical:
            chambers += [(x0, y0, cut - 1, y1), (cut + 1, y0, x1, y1)]
        else:
            chambers += [(x0, y0, x1, cut - 1), (x0, cut + 1, x1, y1)]
    return _maze(rows, (0, 0), (size - 2, size - 2))


def _multi_path(rng: random.Random, openings: int, size: int = SIZE) -> Maze:
    """A perfect maze with ``openings`` inner walls knocked out, so several routes lead to the goal.

    Carved one cell larger and cropped on the top-left, so cells sit on even coordinates of the
    even-sized grid (the bottom row and right column stay wall). Start top-left, goal bottom-right.
    """
    rows = _carve_perfect(rng, size // 2, size // 2)
    between = [
        (x, y)
        for y in range(1, size)
        for x in range(1, size)
        if rows[y][x] == WALL and (x % 2 != y % 2)  # a wall separating two neighbouring cells
    ]
    rng.shuffle(between)
    for x, y in between[:openings]:
        rows[y][x] = EMPTY
    cropped = [row[1:] for row in rows[1:]]
    return _maze(cropped, (0, 0), (size - 2, size - 2))


def _perfect(rng: random.Random, size: int) -> Maze:
    """A perfect maze (exactly one path between any two open cells) with a border, corner to corner."""
    return _maze(_carve_perfect(rng, size // 2, size // 2), (1, 1), (size - 2, size - 2))


# --- the set ----------------------------------------------------------------------------------------


class _Spec(NamedTuple):
    id: int
    name: str
    family: str
    generator: Callable[..., Maze]
    arguments: JsonObject
    seed: int
    pinned_hash: str


_TABLE: tuple[_Spec, ...] = (
    _Spec(1, "sparse-60", "sparse", _random_walls, {"density": 0.10}, 60001,
          "fb3e9a0ba44178b35fb666fec3f270df597f5492886148626dab78b81f653c7a"),
    _Spec(2, "light-60", "light", _random_walls, {"density": 0.20}, 60002,
          "7faa29161432b2cc2acb5ce2845aeb1cc740253f1978c6841cb8caba4803ced0"),
    _Spec(3, "medium-60", "medium", _random_walls, {"density": 0.30}, 60003,
          "f38909183ae02e90ebed9ee1ed79a70f6ea22b2492598742478817de27c6d240"),
    _Spec(4, "dense-60", "dense", _random_walls, {"density": 0.38}, 60004,
          "592b2805b0c4488862efcb34e44580ab71955acdfc67b7b64badb7deb2f49daf"),
    _Spec(5, "very-dense-60", "very-dense", _random_walls, {"density": 0.44}, 60005,
          "90285cc772c8765fc73fcee983959ca520e6a236dc3326fcd09ea4014322b028"),
    _Spec(6, "extreme-60", "extreme", _random_walls, {"density": 0.50}, 60006,
          "ee92c795f49e168187db15d700e1580d14da06ab40f7e502b1da83bb706c54dd"),
    _Spec(7, "open-field-60", "open-field", _open_field, {"obstacles": 16}, 60007,
          "c6007db9168cd16fd612127f11224e9e91ced17bbe264e6baad238cb8bd2b7e4"),
    _Spec(8, "spiral-60", "spiral", _spiral, {"corridor": 3}, 60008,
          "a205c88d0746b2a54ccf67c721f57caf5b2e0a42e4c175e0af1eacc3b4002bf3"),
    _Spec(9, "rooms-60", "rooms", _rooms, {"room": 12}, 60009,
          "e7e624f507bc85a68171a7de2c95edabe86c0431be83663ff1e3ed10b34e8ca3"),
    _Spec(10, "multi-path-60", "multi-path", _multi_path, {"openings": 80}, 60010,
          "c85485dad8902eb522ec29de1e967976b61b41a73452628a882726b652e3fae3"),
    _Spec(11, "diagonal-60", "diagonal", _diagonal_walls, {"density": 0.25}, 60011,
          "4f8917d381cae7fc84a9e0692dfd02010c47efe5e3450fbd2b6f890584a9feb2"),
    _Spec(12, "scatter-60", "scatter", _scatter_blobs, {"density": 0.25}, 60012,
          "c19e8ff20be73b145e7c1d11abeea888b16a65d7e94bb0f197600c71a4174d61"),
    _Spec(101, "perfect-7", "perfect", _perfect, {"size": 7}, 7,
          "fdf921eef5e91a5b5537b9d14413fc41ec0fdc600bc9289193698aec677c91cc"),
    _Spec(102, "perfect-9", "perfect", _perfect, {"size": 9}, 9,
          "5999f8f56898e51ca86cfa77ba81d266d2ccf9086ba063bdc281325f24dd506c"),
    _Spec(103, "perfect-11", "perfect", _perfect, {"size": 11}, 11,
          "6f5ab3b7adfad765f38112ab16fdf5de43044c20fb51bd8b4d9bf72831d39843"),
    _Spec(104, "perfect-15", "perfect", _perfect, {"size": 15}, 15,
          "e5626eb9e1c5951d02d4776e5eb0dd0235166b10b77671a33e14214031708e5d"),
    _Spec(105, "perfect-21", "perfect", _perfect, {"size": 21}, 21,
          "60d8bf1b2e3210c214e7f412a67a654967677683c619ab3c3e0d6e669135bd7c"),
    _Spec(106, "perfect-31", "perfect", _perfect, {"size": 31}, 31,
          "9e77b1e526dedd18ea5b439c87df29fb474589794ecc9523c55306c37bab4f5e"),
)  # fmt: skip


@dataclass(frozen=True)
class Family:
    """A kind of maze: its generator and the arguments it takes at a given size."""

    name: str
    generator: Callable[..., Maze]
    arguments: Callable[[int], JsonObject]
    parity: int | None = None  # the sizes it draws exactly: odd (1) or even (0), or any
    min_size: int = 5

    def check_size(self, size: int) -> None:
        if not self.min_size <= size <= MAX_SIZE:
            raise errors.UnknownMaze(f"{self.name} mazes are {self.min_size} to {MAX_SIZE} tiles wide; got {size}")
        if self.parity is not None and size % 2 != self.parity:
            raise errors.UnknownMaze(f"{self.name} mazes have an {'odd' if self.parity else 'even'} size; got {size}")


def _scaled(count: int) -> Callable[[int], int]:
    """A count chosen for 60x60, scaled with the area."""
    return lambda size: max(1, round(count * (size / SIZE) ** 2))


def _density(density: float) -> Callable[[int], JsonObject]:
    """The same wall density at every size."""
    return lambda size: {"density": density}


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        *(
            Family(name, _random_walls, _density(density))
            for name, density in (
                ("sparse", 0.10),
                ("light", 0.20),
                ("medium", 0.30),
                ("dense", 0.38),
                ("very-dense", 0.44),
                ("extreme", 0.50),
            )
        ),
        Family("open-field", _open_field, lambda size: {"obstacles": _scaled(16)(size)}),
        Family("spiral", _spiral_with_gaps, lambda size: {"corridor": 3, "gaps": max(1, size // 10)}),
        Family("rooms", _rooms, lambda size: {"room": 12}),
        Family("multi-path", _multi_path, lambda size: {"openings": _scaled(80)(size)}, parity=0, min_size=6),
        Family("diagonal", _diagonal_walls, lambda size: {"density": 0.25}),
        Family("scatter", _scatter_blobs, lambda size: {"density": 0.25}),
        Family("perfect", _perfect, lambda size: {}, parity=1),
    )
}


def canonical_name(name: str) -> str:
    """A seeded name as it is stored, its numbers without leading zeros (``perfect-11@07`` is ``perfect-11@7``,
    the same maze: a sweep must not count it twice, a lookup must find it); any other name as it is."""
    match = SEEDED_NAME.fullmatch(name)
    return f"{match['family']}-{int(match['size'])}@{int(match['seed'])}" if match else name


def seeded(name: str) -> MazeEntry:
    """The maze a seeded name (``FAMILY-SIZE@SEED``) stands for, drawn and validated, under its canonical name;
    UnknownMaze for a name of another shape, an unknown family, a size the family does not draw or a seed out
    of range."""
    match = SEEDED_NAME.fullmatch(name)
    if match is None:
        raise errors.UnknownMaze(
            f"unknown maze {name!r}: neither a stored maze nor a seeded name FAMILY-SIZE@SEED "
            f"(families: {', '.join(FAMILIES)}); `oriole mazes list` shows the stored ones"
        )
    family = FAMILIES.get(match["family"])
    if family is None:
        raise errors.UnknownMaze(
            f"unknown maze family {match['family']!r} in {name!r}; families: {', '.join(FAMILIES)}"
        )
    size, seed = int(match["size"]), int(match["seed"])
    family.check_size(size)
    if seed > MAX_SEED:
        raise errors.UnknownMaze(f"the seed of {name!r} must be a whole number from 0 to {MAX_SEED:,}")
    name = f"{family.name}-{size}@{seed}"
    for draw in range(_DRAWS):
        maze = family.generator(
            random.Random(f"{family.name}-{size}@{seed}/{draw}"), size=size, **family.arguments(size)
        )
        try:
            length = maze.validate()
        except InvalidMaze:
            continue  # deterministic: the next draw's seed is derived from the name
        generator = family.generator.__name__.removeprefix("_")
        return MazeEntry(None, name, family.name, generator, seed, maze, length, maze.content_hash())
    raise errors.UnknownMaze(f"{name!r}: no playable maze in {_DRAWS} draws of the {family.name} family")


def _generate(spec: _Spec) -> MazeEntry:
    maze = spec.generator(random.Random(spec.seed), **spec.arguments)
    length = maze.validate()
    content_hash = maze.content_hash()
    if content_hash != spec.pinned_hash:
        raise MazeSetChanged(
            f"maze {spec.name!r} (id {spec.id}) regenerated with content hash {content_hash}, but the table "
            f"pins {spec.pinned_hash}: a generator change would alter a maze stored experiments refer to"
        )
    generator = spec.generator.__name__.removeprefix("_")
    return MazeEntry(spec.id, spec.name, spec.family, generator, spec.seed, maze, length, content_hash)


@cache
def maze_set() -> tuple[MazeEntry, ...]:
    """The whole set in id order, generated once per process (a CLI start or a Lambda cold start)."""
    return tuple(_generate(spec) for spec in sorted(_TABLE, key=lambda spec: spec.id))


def pinned_set() -> frozenset[tuple[int, str, str]]:
    """Each shipped maze's id, name and pinned content hash, without generating it: what a database that already
    holds the set must store (``Store.prepare`` generates the set only when it does not)."""
    return frozenset((spec.id, spec.name, spec.pinned_hash) for spec in _TABLE)


def get_maze(name_or_id: str | int) -> MazeEntry:
    """A maze of the shipped set by name or id (an int, or a string of digits as a CLI passes it), or the maze
    a seeded name stands for."""
    number = ascii_int(name_or_id, 18, signed=False) if isinstance(name_or_id, str) else None
    key = number if number is not None else name_or_id
    for entry in maze_set():
        if key in (entry.name, entry.id):
            return entry
    if isinstance(key, str) and SEEDED_NAME.fullmatch(key):
        return seeded(key)
    names = ", ".join(entry.name for entry in maze_set())
    raise errors.UnknownMaze(
        f"unknown maze {name_or_id!r}; shipped mazes (or their ids) are: {names}, and any "
        f"seeded name FAMILY-SIZE@SEED (families: {', '.join(FAMILIES)})"
    )
