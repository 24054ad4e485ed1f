"""Tool-call validation and execution: every call becomes exactly one action."""

import pytest

from oriole.core.maze import Maze, vision
from oriole.core.tools import RecallWindow, Rules, ToolCall, ToolCallError, WorldState, execute, parse_arguments

MAZE = Maze.from_rows([[0, 0, 0, 1, 2], [0, 1, 0, 1, 0], [0, 0, 0, 0, 0]], (0, 0), (4, 0))


def game(**overrides) -> Rules:
    values = {
        "maze": MAZE,
        "vision_range": 3,
        "goal_condition": "reach",
        "recall_interval": 3,
        "max_recall_actions": 50,
        **overrides,
    }
    return Rules(**values)


def play(world, *calls, rules=None, memory=None):
    memory = memory or RecallWindow(50)
    return [execute(call, world, rules or game(), memory) for call in calls]


@pytest.mark.parametrize(
    "raw, expected",
    [
        (None, {}),
        ("", {}),
        ({}, {}),
        ({"reasoning": "go"}, {"reasoning": "go"}),
        ('{"reasoning": "go"}', {"reasoning": "go"}),
    ],
)
def test_arguments_as_object_or_json_string(raw, expected):
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize(
    "raw, message",
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "must be an object"),
        ({"reasoning": 3}, "must be a string"),
        ({"experiment_id": 7}, "unexpected argument"),
        ({"x": 1, "y": 2}, "takes only 'reasoning'"),
    ],
)
def test_bad_arguments_are_rejected_with_a_reason(raw, message):
    with pytest.raises(ToolCallError, match=message):
        parse_arguments(raw)


def test_a_move_advances_the_step_and_reports_what_is_seen():
    world = WorldState(position=(0, 0))
    [action] = play(world, ToolCall("move_east", {"reasoning": "open"}))
    assert (action.step_number, action.success, action.to_pos) == (1, True, (1, 0))
    assert action.reasoning == "open"
    assert action.result["position"] == [1, 0]
    assert [3, 0] in action.result["visible"]["walls"]
    assert world.position == (1, 0) and world.moves == 1


def test_a_move_into_a_wall_is_a_failed_action():
    world = WorldState(position=(0, 1))
    [action] = play(world, ToolCall("move_east"))
    assert not action.success and action.to_pos == (0, 1)
    assert "wall" in action.error and action.result["error"] == action.error
    assert world.failed_moves == 1 and world.moves == 1


def test_unknown_tools_and_bad_arguments_are_invalid_actions():
    world = WorldState(position=(0, 0))
    actions = play(
        world, ToolCall("teleport"), ToolCall("move_east", {"experiment_id": 99}), ToolCall("move_east", "{")
    )
    assert [a.action_type for a in actions] == ["invalid"] * 3
    assert "unknown tool 'teleport'" in actions[0].error
    assert [a.step_number for a in actions] == [1, 2, 3]
    assert world.position == (0, 0) and world.invalid_calls == 3 and world.moves == 0


def test_recall_cooldown_is_an_error_action_saying_how_many_moves_remain():
    world = WorldState(position=(0, 0))
    memory = RecallWindow(50)
    first, _, second = play(
        world, ToolCall("recall_all"), ToolCall("move_south"), ToolCall("recall_all"), memory=memory
    )
    assert first.success and "memory" in first.result
    assert not second.success and "2 more move(s)" in second.error
    play(world, ToolCall("move_south"), ToolCall("move_east"), memory=memory)
    [third] = play(world, ToolCall("recall_all"), memory=memory)
    assert third.success
    assert third.result["memory"]["visited"][:2] == [[0, 0], [0, 1]]
    assert world.recalls == 3


def test_recall_window_keeps_only_the_last_actions():
    world = WorldState(position=(0, 0))
    memory = RecallWindow(2)
    play(world, ToolCall("move_south"), ToolCall("move_south"), ToolCall("move_east"), memory=memory)
    [recall] = play(world, ToolCall("recall_all"), memory=memory)
    assert recall.result["memory"]["visited"] == [[0, 2], [1, 2]]


def test_reaching_the_goal_sets_found_and_steps():
    world = WorldState(position=(4, 2))
    first, second = play(world, ToolCall("move_north"), ToolCall("move_north"))
    assert second.to_pos == (4, 0)
    assert first.goal_visible and world.goal_first_seen_step == 1
    assert world.goal_found and world.goal_reached_step == 2


def test_sight_condition_is_met_when_the_goal_comes_into_view():
    world = WorldState(position=(2, 2))
    play(world, ToolCall("move_east"), ToolCall("move_east"), rules=game(goal_condition="sight"))
    assert world.goal_found and world.goal_reached_step is None and world.goal_first_seen_step == 2


def test_recall_includes_what_the_start_tile_showed_while_the_window_reaches_back_to_it():
    start = ((0, 0), [t.as_list() for t in vision(MAZE, (0, 0), 3)])
    world = WorldState(position=(0, 0))
    memory = RecallWindow(3, start=start)
    play(world, ToolCall("move_south"), memory=memory)
    [recall] = play(world, ToolCall("recall_all"), memory=memory)
    assert recall.result["memory"]["visited"][0] == [0, 0]
    assert [2, 0] in recall.result["memory"]["open"]  # seen east from the start tile only
    play(world, ToolCall("move_south"), ToolCall("move_east"), memory=memory)
    world.moves_at_last_recall = None
    [later] = play(world, ToolCall("recall_all"), memory=memory)
    assert [0, 0] not in later.result["memory"]["visited"]  # four actions later the start is out of the window
