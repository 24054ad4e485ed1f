"""The optimum a run's path is measured against, under either goal condition: the shortest path to the goal
(``reach``) or to the nearest tile from which the goal is seen (``sight``, with the experiment's vision range).
Checked against an independent computation (the tiles that see the goal found by scanning rows and columns, a
breadth-first search of the test's own) over the shipped mazes and seeded mazes of every family; the oracle
walks it exactly, and no run of any agent can be shorter, so no efficiency exceeds 1."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oriole.core import mazeset
from oriole.core.baselines import make_baseline
from oriole.core.maze import GOAL_CONDITIONS, WALL, Maze, optimal_path_length
from oriole.core.tools import RecallWindow, Rules, WorldState
from oriole.core.turn_loop import TurnSettings, run_turn, turn_context


def sees_goal(maze: Maze, x: int, y: int, vision_range: int) -> bool:
    """Whether the goal is in sight from (x, y), worked out from the rules as written: the same row or column,
    at most ``vision_range`` tiles away, no wall strictly between."""
    gx, gy = maze.goal
    if (x, y) == (gx, gy):
        return True
    if x != gx and y != gy:
        return False
    distance = abs(x - gx) + abs(y - gy)
    if distance > vision_range:
        return False
    dx, dy = (gx > x) - (gx < x), (gy > y) - (gy < y)
    return all(maze.grid[y + dy * i][x + dx * i] != WALL for i in range(1, distance))


def optimum_by_hand(maze: Maze, condition: str, vision_range: int) -> int:
    """Breadth-first search over open tiles to any tile that meets the condition; a start that already meets it
    needs one move: into a wall next to it (no tile changes), else one step."""

    def meets(x: int, y: int) -> bool:
        return (x, y) == maze.goal if condition == "reach" else sees_goal(maze, x, y, vision_range)

    def open_tile(x: int, y: int) -> bool:
        return 0 <= x < maze.width and 0 <= y < maze.height and maze.grid[y][x] != WALL

    sx, sy = maze.start
    steps = ((1, 0), (-1, 0), (0, 1), (0, -1))
    if meets(sx, sy):
        return 0 if any(not open_tile(sx + dx, sy + dy) for dx, dy in steps) else 1
    seen, queue = {(sx, sy): 0}, deque([(sx, sy)])
    while queue:
        x, y = queue.popleft()
        if meets(x, y):
            return seen[x, y]
        for dx, dy in steps:
            nxt = (x + dx, y + dy)
            if open_tile(*nxt) and nxt not in seen:
                seen[nxt] = seen[x, y] + 1
                queue.append(nxt)
    raise AssertionError("a validated maze's goal is reachable")


def play(agent_name: str, maze: Maze, condition: str, vision_range: int, max_moves: int, seed: int = 1):
    """A baseline through the real turn loop until the goal condition or the action budget."""
    rules = Rules(maze, vision_range, condition, 10, 50)
    world, memory, state = WorldState(position=maze.start), RecallWindow(50), None
    while not world.goal_found and world.action_count < max_moves:
        agent = make_baseline(agent_name, maze, seed, state, goal_condition=condition, vision_range=vision_range)
        settings_ = TurnSettings(
            budget=min(8, max_moves - world.action_count), actions_left=max_moves - world.action_count
        )
        run_turn(agent, "", world, rules, memory, turn_context(world, rules, [], max_moves), settings_)
        state = agent.state
    return world


def path_length(world: WorldState) -> int:
    return world.moves - world.failed_moves


SEEDED = (
    st.builds(
        lambda family, size, seed: mazeset.seeded(f"{family}-{size}@{seed}").maze,
        st.sampled_from(sorted(set(mazeset.FAMILIES) - {"perfect", "multi-path"})),
        st.integers(9, 31),
        st.integers(0, 10**6),
    )
    | st.builds(
        lambda size, seed: mazeset.seeded(f"perfect-{size}@{seed}").maze,
        st.sampled_from([7, 9, 11, 15, 21]),
        st.integers(0, 10**6),
    )
    | st.builds(
        lambda size, seed: mazeset.seeded(f"multi-path-{size}@{seed}").maze,
        st.sampled_from([10, 16, 24]),
        st.integers(0, 10**6),
    )
)


@pytest.mark.parametrize("entry", mazeset.maze_set(), ids=lambda e: e.name)
@pytest.mark.parametrize("condition", GOAL_CONDITIONS)
def test_the_optimum_of_every_shipped_maze_is_the_independent_one_and_the_oracle_walks_it(entry, condition):
    for vision_range in (0, 3):
        optimum = optimal_path_length(condition, entry.maze, vision_range)
        assert optimum == optimum_by_hand(entry.maze, condition, vision_range)
        assert optimum <= entry.shortest_path_length
        world = play("oracle", entry.maze, condition, vision_range, 5000)
        assert world.goal_found and path_length(world) == optimum  # efficiency exactly 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDED, st.sampled_from(GOAL_CONDITIONS), st.integers(0, 6), st.integers(0, 2**31 - 1))
def test_no_run_on_any_seeded_maze_is_shorter_than_the_optimum(maze, condition, vision_range, seed):
    """The oracle meets the optimum exactly; a random walk and the explorer that succeed never beat it."""
    optimum = optimal_path_length(condition, maze, vision_range)
    assert optimum == optimum_by_hand(maze, condition, vision_range)
    oracle = play("oracle", maze, condition, vision_range, 5000)
    assert oracle.goal_found and path_length(oracle) == optimum
    for name in ("random", "explorer"):
        world = play(name, maze, condition, vision_range, 600, seed)
        if world.goal_found:
            assert path_length(world) >= optimum
            assert (optimum / max(optimum, path_length(world)) if path_length(world) else 1.0) <= 1.0


def test_sight_from_the_start_needs_one_move_into_a_wall_or_one_step():
    """The condition is judged after a move: a goal seen from the start is met by bumping a wall (path 0)."""
    walled = Maze.from_rows([[0, 0, 2], [1, 1, 1]], (0, 0), (2, 0))
    assert optimal_path_length("sight", walled, 3) == 0 and optimal_path_length("reach", walled, 3) == 2
    world = play("oracle", walled, "sight", 3, 10)
    assert world.goal_found and world.moves == 1 and path_length(world) == 0
    open_all_round = Maze.from_rows(
        [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]], (1, 2), (3, 2)
    )
    assert optimal_path_length("sight", open_all_round, 3) == 1
    world = play("oracle", open_all_round, "sight", 3, 10)
    assert world.goal_found and path_length(world) == 1
