"""The maze rules on small hand-drawn grids, including the edge cases the issue names."""

import pytest

from oriole.core import maze as rules
from oriole.core.maze import GOAL, WALL, InvalidMaze, Maze, Tile


def grid(*rows: str) -> Maze:
    """Build a maze from text: # wall, . open, G goal, S start (open)."""
    cells, start, goal = [], None, None
    for y, row in enumerate(rows):
        line = []
        for x, ch in enumerate(row):
            line.append({"#": 1, "G": 2}.get(ch, 0))
            if ch == "S":
                start = (x, y)
            if ch == "G":
                goal = (x, y)
        cells.append(line)
    return Maze.from_rows(cells, start, goal)


CORRIDOR = grid("S..#G", ".#.#.", ".....")


def test_move_into_open_tile_succeeds():
    assert rules.move(CORRIDOR, (0, 0), "east") == ((1, 0), True)
    assert rules.move(CORRIDOR, (0, 0), "south") == ((0, 1), True)


def test_move_into_wall_fails_and_stays():
    assert rules.move(CORRIDOR, (2, 0), "east") == ((2, 0), False)
    assert rules.move(CORRIDOR, (0, 1), "east") == ((0, 1), False)


@pytest.mark.parametrize("direction", ["north", "west"])
def test_move_off_the_grid_fails_and_stays(direction):
    assert rules.move(CORRIDOR, (0, 0), direction) == ((0, 0), False)


def test_outside_the_grid_is_wall():
    assert CORRIDOR.cell((-1, 0)) == WALL
    assert CORRIDOR.cell((5, 0)) == WALL
    assert CORRIDOR.cell((0, 3)) == WALL


def test_vision_in_a_corner_stops_at_the_edges():
    tiles = rules.vision(CORRIDOR, (0, 0), 3)
    assert Tile(0, 0, 0) in tiles
    assert all(CORRIDOR.inside((t.x, t.y)) for t in tiles)
    assert {(t.x, t.y) for t in tiles} == {(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (0, 2)}


def test_vision_ray_includes_the_first_wall_and_stops():
    tiles = rules.vision(CORRIDOR, (2, 0), 3)
    east = [(t.x, t.y, t.cell) for t in tiles if t.y == 0 and t.x > 2]
    assert east == [(3, 0, WALL)]  # the goal behind the wall at x=4 is not seen


def test_wall_exactly_at_range_is_seen():
    maze = grid("S..#G", ".....")
    tiles = rules.vision(maze, (0, 0), 3)
    assert Tile(3, 0, WALL) in tiles
    assert Tile(3, 0, WALL) not in rules.vision(maze, (0, 0), 2)


def test_vision_range_zero_sees_only_the_own_tile():
    assert rules.vision(CORRIDOR, (2, 2), 0) == [Tile(2, 2, 0)]


def test_goal_behind_a_wall_is_not_visible():
    tiles = rules.vision(CORRIDOR, (2, 0), 5)
    assert not rules.goal_visible(tiles)
    assert not rules.goal_met("sight", CORRIDOR, (2, 0), tiles)


def test_goal_in_sight_meets_sight_but_not_reach():
    tiles = rules.vision(CORRIDOR, (4, 2), 3)
    assert rules.goal_visible(tiles)
    assert rules.goal_met("sight", CORRIDOR, (4, 2), tiles)
    assert not rules.goal_met("reach", CORRIDOR, (4, 2), tiles)


def test_standing_on_the_goal_meets_reach():
    tiles = rules.vision(CORRIDOR, (4, 0), 1)
    assert Tile(4, 0, GOAL) in tiles
    assert rules.goal_met("reach", CORRIDOR, (4, 0), tiles)


def test_unknown_goal_condition_is_rejected():
    with pytest.raises(ValueError, match="unknown goal condition"):
        rules.goal_met("touch", CORRIDOR, (0, 0), [])


def test_recall_cooldown_counts_moves_since_the_last_recall():
    assert rules.recall_moves_remaining(moves=0, moves_at_last_recall=None, interval=10) == 0
    assert rules.recall_moves_remaining(moves=13, moves_at_last_recall=10, interval=10) == 7
    assert rules.recall_moves_remaining(moves=20, moves_at_last_recall=10, interval=10) == 0


def test_recall_summary_lists_visits_in_order_and_latest_sightings():
    memories = [((0, 0), [[0, 0, 0], [1, 0, 0]]), ((1, 0), [[1, 0, 0], [2, 0, 1]]), ((1, 0), [])]
    summary = rules.recall_summary(memories)
    assert summary["visited"] == [[0, 0], [1, 0]]
    assert summary["open"] == [[0, 0], [1, 0]]
    assert summary["walls"] == [[2, 0]]
    assert summary["goal"] is None


def test_shortest_path_and_validation():
    assert CORRIDOR.validate() == 8
    assert CORRIDOR.shortest_path()[0] == CORRIDOR.start
    assert CORRIDOR.shortest_path()[-1] == CORRIDOR.goal


@pytest.mark.parametrize(
    "rows, message",
    [
        (("S#G",), "not reachable"),
        (("S.G", "..G"), "exactly one goal"),
    ],
)
def test_invalid_mazes_are_refused(rows, message):
    with pytest.raises(InvalidMaze, match=message):
        grid(*rows).validate()


def test_start_on_a_wall_is_refused():
    maze = Maze.from_rows([[1, 0, 2]], (0, 0), (2, 0))
    with pytest.raises(InvalidMaze, match="start"):
        maze.validate()


def test_content_hash_changes_with_any_cell():
    other = Maze.from_rows([list(r) for r in CORRIDOR.grid[:-1]] + [[0, 0, 0, 0, 1]], CORRIDOR.start, CORRIDOR.goal)
    assert CORRIDOR.content_hash() != other.content_hash()
    assert CORRIDOR.content_hash() == grid("S..#G", ".#.#.", ".....").content_hash()
