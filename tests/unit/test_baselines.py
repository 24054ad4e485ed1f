"""Baseline agents play through the real turn loop on the real maze set."""

import pytest

from oriole.core import mazeset
from oriole.core.baselines import make_baseline
from oriole.core.tools import RecallWindow, Rules, WorldState
from oriole.core.turn_loop import TurnSettings, run_turn, turn_context


def play(name: str, maze_name: str, max_moves: int, seed: int = 7, vision: int = 3, condition: str = "reach"):
    """Run turns of 8 actions until the goal or the limit, restoring the agent's state each turn."""
    entry = mazeset.get_maze(maze_name)
    rules = Rules(entry.maze, vision, condition, 10, 50)
    world, memory, state = WorldState(position=entry.maze.start), RecallWindow(50), None
    while not world.goal_found and world.action_count < max_moves:
        agent = make_baseline(name, entry.maze, seed, state, goal_condition=condition, vision_range=vision)
        budget = min(8, max_moves - world.action_count)
        run_turn(
            agent,
            "",
            world,
            rules,
            memory,
            turn_context(world, rules, [], max_moves),
            TurnSettings(budget=budget, actions_left=max_moves - world.action_count),
        )
        state = agent.state
    return entry, world


@pytest.mark.parametrize("maze_name", ["perfect-11", "perfect-31", "sparse-60", "rooms-60"])
def test_oracle_walks_the_shortest_path(maze_name):
    entry, world = play("oracle", maze_name, 5000)
    assert world.goal_found and world.moves == entry.shortest_path_length and world.failed_moves == 0


@pytest.mark.parametrize("maze_name", ["perfect-11", "perfect-21", "dense-60", "spiral-60"])
def test_explorer_finds_the_goal_moving_only_on_what_it_has_seen(maze_name):
    entry, world = play("explorer", maze_name, 10000)
    assert world.goal_found and world.failed_moves == 0
    assert world.moves >= entry.shortest_path_length


def test_explorer_works_blind_by_bumping_into_walls():
    _, world = play("explorer", "perfect-9", 2000, vision=0)
    assert world.goal_found and world.failed_moves > 0


@pytest.mark.parametrize("maze_name", ["perfect-11", "perfect-21"])
def test_wall_follower_solves_perfect_mazes(maze_name):
    _, world = play("wall-follower", maze_name, 5000)
    assert world.goal_found and world.failed_moves == 0


def test_random_agent_is_reproducible_from_its_seed_and_never_walks_into_seen_walls():
    _, first = play("random", "sparse-60", 400, seed=3)
    _, again = play("random", "sparse-60", 400, seed=3)
    _, other = play("random", "sparse-60", 400, seed=4)
    assert first.position == again.position and first.action_count == 400
    assert first.position != other.position
    assert first.failed_moves == 0


def test_unknown_baseline_is_refused():
    with pytest.raises(ValueError, match="expected one of random, wall-follower, explorer, oracle"):
        make_baseline("genius", mazeset.get_maze("perfect-7").maze, 1, None, goal_condition="reach", vision_range=3)
