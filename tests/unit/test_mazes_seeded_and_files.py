"""Seeded maze families and maze files: deterministic draws, always playable, and files checked before storing."""

from __future__ import annotations

import json
import re
from collections import deque

import pytest

from oriole.core import mazeset
from oriole.core.maze import WALL
from oriole.errors import UnknownMaze
from oriole_workstation import mazefiles


def bfs_length(maze) -> int | None:
    """An independent breadth-first search over the grid (not the project's own)."""
    seen, queue = {maze.start: 0}, deque([maze.start])
    while queue:
        x, y = queue.popleft()
        if (x, y) == maze.goal:
            return seen[(x, y)]
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < maze.width and 0 <= ny < maze.height and maze.grid[ny][nx] != WALL and (nx, ny) not in seen:
                seen[(nx, ny)] = seen[(x, y)] + 1
                queue.append((nx, ny))
    return None


@pytest.mark.parametrize(
    "family, size",
    [
        ("perfect", 11),
        ("dense", 31),
        ("rooms", 21),
        ("multi-path", 20),
        ("spiral", 15),
        ("extreme", 25),
        ("open-field", 12),
        ("scatter", 9),
    ],
)
def test_ten_seeds_give_ten_different_playable_mazes_whose_stored_length_an_independent_search_confirms(family, size):
    entries = [mazeset.seeded(f"{family}-{size}@{seed}") for seed in range(10)]
    assert len({e.content_hash for e in entries}) == 10
    for entry in entries:
        assert (entry.maze.width, entry.maze.height) == (size, size) and entry.family == family
        assert bfs_length(entry.maze) == entry.shortest_path_length > 0


def test_the_same_name_gives_the_same_maze_and_the_draws_are_pinned_to_the_generator_version():
    assert mazeset.seeded("perfect-11@42") == mazeset.seeded("perfect-11@42")
    assert mazeset.GENERATOR_VERSION == "1"  # bumping it must come with new pins below
    assert mazeset.seeded("perfect-11@42").content_hash[:16] == PINNED["perfect-11@42"]
    assert mazeset.seeded("dense-31@7").content_hash[:16] == PINNED["dense-31@7"]
    assert mazeset.seeded("spiral-21@3").content_hash[:16] == PINNED["spiral-21@3"]
    assert mazeset.get_maze("perfect-11").id == 103  # the shipped names keep meaning what they meant


PINNED = {
    "perfect-11@42": "2ba9b005d9684c73",
    "dense-31@7": "1eaeeba71504797d",
    "spiral-21@3": "1f27832a5173f5fb",
}  # version 1's draws: a changed generator must bump the version


@pytest.mark.parametrize(
    "name, message",
    [
        ("perfect-11", "neither a stored maze nor a seeded name"),
        ("labyrinth-11@1", "unknown maze family"),
        ("perfect-12@1", "odd size"),
        ("multi-path-11@1", "even size"),
        ("perfect-3@1", "5 to 201"),
        ("dense-999@1", "5 to 201"),
        ("perfect-11@", "neither"),
    ],
)
def test_names_that_are_not_seeded_mazes_are_refused_with_the_reason(name, message):
    with pytest.raises(UnknownMaze, match=message):
        mazeset.seeded(name)


# --- maze files -------------------------------------------------------------------------------------------

PUBLIC_STYLE = {
    "name": "09_small",
    "width": 5,
    "height": 5,
    "see_through_walls": False,
    "grid_data": [[1, 1, 1, 1, 1], [1, 0, 0, 0, 1], [1, 1, 1, 0, 1], [1, 0, 0, 2, 1], [1, 1, 1, 1, 1]],
}


def write(tmp_path, name: str, content: str | bytes):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_a_public_oriole_style_file_imports_with_a_start_given(tmp_path):
    entry = mazefiles.read(write(tmp_path, "m.json", json.dumps(PUBLIC_STYLE)), start=(1, 1))
    assert entry.name == "09_small" and entry.maze.goal == (3, 3) and entry.shortest_path_length == 4
    assert bfs_length(entry.maze) == 4 and entry.family == "imported"


def test_a_text_grid_imports_with_its_start_and_goal(tmp_path):
    entry = mazefiles.read(write(tmp_path, "corridor.txt", "#####\n#S..#\n###G#\n#####\n"), name="corridor")
    assert entry.maze.start == (1, 1) and entry.maze.goal == (3, 2) and entry.shortest_path_length == 3


@pytest.mark.parametrize(
    "content, options, message",
    [
        (json.dumps(PUBLIC_STYLE), {}, "gives no start: pass --start"),
        (json.dumps(PUBLIC_STYLE), {"start": (0, 0)}, "start (0, 0) is a wall"),
        (json.dumps(PUBLIC_STYLE), {"start": (9, 1)}, "outside the 5x5 grid"),
        (json.dumps({**PUBLIC_STYLE, "grid_data": [[0, 1, 2], [0, 1, 0]]}), {"start": (0, 0)}, "not reachable"),
        (json.dumps({**PUBLIC_STYLE, "grid_data": [[0, 2], [0]]}), {"start": (0, 0)}, "not a rectangle"),
        (json.dumps({"grid": [[0] * 300] * 2}), {"start": (0, 0), "goal": (1, 1)}, "exceeds the largest maze"),
        (json.dumps({"grid": [[0, 2, 2]]}), {"start": (0, 0)}, "more than one goal"),
        (json.dumps({"grid": [[0, 0, 0]]}), {"start": (0, 0)}, "marks no goal"),
        (json.dumps({"grid": [[0, 3]]}), {"start": (0, 0)}, "cells must be 0"),
        (json.dumps({"grid": [[0, 0, 2]]}), {"start": (0, 0), "goal": (1, 0)}, "marks the goal at"),
        ("#S#\n#.x\n", {}, "only # . S G"),
        (b"\xff\xfe#S", {}, "not UTF-8"),
        ('{"grid": ', {}, "not valid JSON"),
    ],
)
def test_a_maze_that_cannot_be_played_is_refused_with_the_reason(tmp_path, content, options, message):
    with pytest.raises(mazefiles.MazeFileError, match=re.escape(message)):
        mazefiles.read(write(tmp_path, "bad.json", content), **options)


def test_a_name_of_the_seeded_form_is_refused_for_an_import(tmp_path):
    with pytest.raises(mazefiles.MazeFileError, match="seeded form"):
        mazefiles.read(write(tmp_path, "m.json", json.dumps(PUBLIC_STYLE)), name="perfect-5@1", start=(1, 1))
