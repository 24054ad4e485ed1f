"""The fixed maze set: names and ids, playability, reproducibility, the pinned hashes and the look-up."""

from __future__ import annotations

import random
from collections import deque

import pytest

from oriole.core import mazeset
from oriole.core.maze import GOAL, WALL
from oriole.core.mazeset import MazeSetChanged, get_maze, maze_set
from oriole.errors import UnknownMaze

EXPECTED = {
    1: "sparse-60",
    2: "light-60",
    3: "medium-60",
    4: "dense-60",
    5: "very-dense-60",
    6: "extreme-60",
    7: "open-field-60",
    8: "spiral-60",
    9: "rooms-60",
    10: "multi-path-60",
    11: "diagonal-60",
    12: "scatter-60",
    101: "perfect-7",
    102: "perfect-9",
    103: "perfect-11",
    104: "perfect-15",
    105: "perfect-21",
    106: "perfect-31",
}
DENSITY_TARGETS = {
    "sparse-60": 0.10,
    "light-60": 0.20,
    "medium-60": 0.30,
    "dense-60": 0.38,
    "very-dense-60": 0.44,
    "extreme-60": 0.50,
}
PERFECT = [name for name in EXPECTED.values() if name.startswith("perfect-")]


def open_cells(maze) -> set[tuple[int, int]]:
    return {(x, y) for y, row in enumerate(maze.grid) for x, cell in enumerate(row) if cell != WALL}


def distances_from_start(maze) -> dict[tuple[int, int], int]:
    """A BFS written here, independent of maze.py, over the open cells."""
    cells = open_cells(maze)
    distance = {maze.start: 0}
    queue = deque([maze.start])
    while queue:
        x, y = queue.popleft()
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if nxt in cells and nxt not in distance:
                distance[nxt] = distance[(x, y)] + 1
                queue.append(nxt)
    return distance


def open_adjacencies(maze) -> int:
    cells = open_cells(maze)
    return sum((x + 1, y) in cells for x, y in cells) + sum((x, y + 1) in cells for x, y in cells)


def wall_density(maze) -> float:
    return sum(cell == WALL for row in maze.grid for cell in row) / (maze.width * maze.height)


def test_the_set_has_the_named_mazes_with_stable_unique_ids():
    entries = maze_set()
    assert [(entry.id, entry.name) for entry in entries] == list(EXPECTED.items())
    assert len({entry.id for entry in entries}) == len({entry.name for entry in entries}) == 18


def test_entries_record_family_generator_seed_and_hash():
    for entry in maze_set():
        assert entry.name.startswith(entry.family + "-")
        assert entry.generator and not entry.generator.startswith("_")
        assert callable(getattr(mazeset, "_" + entry.generator))
        assert isinstance(entry.seed, int)
        assert entry.content_hash == entry.maze.content_hash()
    assert get_maze("sparse-60").generator == "random_walls"
    assert {get_maze(name).generator for name in PERFECT} == {"perfect"}


@pytest.mark.parametrize("name", EXPECTED.values())
def test_every_maze_is_playable_and_shaped_as_named(name):
    entry = get_maze(name)
    maze = entry.maze
    size = int(name.rsplit("-", 1)[1])
    assert (maze.width, maze.height) == (size, size)
    assert maze.validate() == entry.shortest_path_length
    assert maze.grid[maze.start[1]][maze.start[0]] != WALL
    assert maze.grid[maze.goal[1]][maze.goal[0]] == GOAL
    assert distances_from_start(maze)[maze.goal] == entry.shortest_path_length
    assert entry.shortest_path_length >= size - 1  # start and goal are far apart


def test_regenerating_gives_identical_mazes_equal_to_the_pinned_hashes():
    first = maze_set()
    maze_set.cache_clear()
    random.seed(12345)  # the global generator's state must not matter
    random.random()
    second = maze_set()
    assert second is not first
    assert [entry.maze for entry in second] == [entry.maze for entry in first]
    pinned = {spec.name: spec.pinned_hash for spec in mazeset._TABLE}
    assert {entry.name: entry.maze.content_hash() for entry in second} == pinned


def test_a_maze_that_no_longer_matches_its_pinned_hash_is_refused(monkeypatch):
    tampered = tuple(
        spec._replace(pinned_hash="0" * 64) if spec.name == "rooms-60" else spec for spec in mazeset._TABLE
    )
    monkeypatch.setattr(mazeset, "_TABLE", tampered)
    maze_set.cache_clear()
    with pytest.raises(MazeSetChanged, match="'rooms-60'"):
        maze_set()
    maze_set.cache_clear()


def test_density_families_hit_their_targets_in_increasing_order():
    densities = [wall_density(get_maze(name).maze) for name in DENSITY_TARGETS]
    for density, target in zip(densities, DENSITY_TARGETS.values(), strict=True):
        assert abs(density - target) <= 0.03
    assert densities == sorted(densities) and len(set(densities)) == len(densities)


def test_open_field_has_only_a_few_obstacles():
    assert 0 < wall_density(get_maze("open-field-60").maze) < 0.05


def test_spiral_leads_from_an_outer_corner_to_the_centre_along_one_long_corridor():
    entry = get_maze("spiral-60")
    start, goal = entry.maze.start, entry.maze.goal
    assert start[0] in (0, 59) and start[1] in (0, 59)
    assert abs(goal[0] - 29.5) < 5 and abs(goal[1] - 29.5) < 5
    assert entry.shortest_path_length > 10 * 60


def test_multi_path_has_loops_so_several_routes_exist():
    maze = get_maze("multi-path-60").maze
    assert open_adjacencies(maze) > len(open_cells(maze)) - 1


@pytest.mark.parametrize("name", PERFECT)
def test_perfect_mazes_are_trees_inside_a_border(name):
    maze = get_maze(name).maze
    cells = open_cells(maze)
    assert len(distances_from_start(maze)) == len(cells)  # connected
    assert open_adjacencies(maze) == len(cells) - 1  # and without loops: exactly one path
    border = [maze.grid[0], maze.grid[-1], [row[0] for row in maze.grid], [row[-1] for row in maze.grid]]
    assert all(cell == WALL for side in border for cell in side)


def test_get_maze_by_name_by_id_and_by_digit_string():
    assert get_maze("spiral-60").id == 8
    assert get_maze(8).name == "spiral-60"
    assert get_maze("8").name == "spiral-60"
    assert get_maze("101").name == "perfect-7"
    assert get_maze(106) is maze_set()[-1]


@pytest.mark.parametrize("unknown", ["maze-of-doom", 13, "13", "", "Sparse-60"])
def test_get_maze_rejects_unknown_names_and_ids_listing_the_known_names(unknown):
    with pytest.raises(UnknownMaze) as caught:
        get_maze(unknown)
    assert type(caught.value).__name__ == "UnknownMaze"  # the Step Functions error name
    message = str(caught.value)
    assert repr(unknown) in message
    assert all(name in message for name in EXPECTED.values())
