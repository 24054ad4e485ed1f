"""The shared turn loop with a scripted agent standing in for a model."""

from oriole.maze import Maze
from oriole.tools import Memory, Rules, ToolCall, WorldState
from oriole.turn_loop import ModelResponse, Usage, estimate_tokens, run_turn, turn_context

MAZE = Maze.from_rows([[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]], (0, 0), (11, 0))
RULES = Rules(MAZE, vision_range=2, goal_condition="reach", recall_interval=10, max_recall_actions=50)


class Scripted:
    """Answers each request with the next scripted response and records what it was asked."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests = []

    def respond(self, request):
        self.requests.append(request)
        return self.responses.pop(0)


def calls(*names):
    return ModelResponse(tool_calls=tuple(ToolCall(n, {}, call_id=f"c{i}") for i, n in enumerate(names)),
                         usage=Usage(100, 10, 5))


def turn(agent, budget=8, position=(0, 0)):
    world = WorldState(position=position)
    context = turn_context(world, RULES, [], max_moves=100)
    return run_turn(agent, "system", world, RULES, Memory(50), context, budget), world


def test_turn_ends_when_the_model_answers_without_a_tool_call():
    agent = Scripted(calls("move_east"), ModelResponse(text="thinking about it"))
    outcome, world = turn(agent)
    assert outcome.end_reason == "no_tool_call"
    assert len(outcome.actions) == 1 and world.position == (1, 0)
    last = agent.requests[-1].messages
    assert [m.role for m in last] == ["user", "assistant", "tool"]
    assert last[-1].tool_call_id == "c0" and last[-1].content["position"] == [1, 0]


def test_several_calls_in_one_response_run_in_order_within_the_budget():
    agent = Scripted(calls(*["move_east"] * 10))
    outcome, world = turn(agent, budget=8)
    assert outcome.end_reason == "action_budget"
    assert len(outcome.actions) == 8 and world.position == (8, 0)
    assert len(agent.requests) == 1


def test_goal_found_ends_the_turn():
    agent = Scripted(calls("move_east", "move_east", "move_east"))
    outcome, world = turn(agent, position=(9, 0))
    assert outcome.end_reason == "goal_found" and len(outcome.actions) == 2 and world.goal_found


def test_circuit_breaker_opens_after_three_invalid_calls_in_a_row():
    agent = Scripted(calls("fly", "move_east", "fly"), calls("fly", "fly", "fly", "move_east"))
    outcome, world = turn(agent)
    assert outcome.end_reason == "circuit_breaker"
    assert [a.action_type for a in outcome.actions] == ["invalid", "move_east", "invalid", "invalid", "invalid"]
    assert world.invalid_calls == 4


def test_usage_is_summed_over_the_model_calls_of_the_turn():
    agent = Scripted(calls("move_east"), calls("move_east"), ModelResponse(usage=Usage(7, 1, 2)))
    outcome, _ = turn(agent)
    assert outcome.usage == Usage(207, 21, 12)
    assert len(outcome.responses) == 3


def test_context_tells_position_view_size_and_history_but_no_experiment_id():
    world = WorldState(position=(3, 0), step=5)
    context = turn_context(world, RULES, [{"step": 5, "action": "move_east"}], max_moves=100)
    assert context["position"] == [3, 0] and context["step"] == 5 and context["actions_left"] == 95
    assert context["maze_size"] == [12, 1]
    assert context["visible"]["open"] == [[1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]
    assert "experiment" not in str(context)


def test_history_is_trimmed_oldest_first_to_the_context_budget_never_the_system_prompt():
    world = WorldState(position=(0, 0))
    history = [{"step": i, "action": "move_east", "position": [i, 0], "success": True} for i in range(1, 201)]
    context = turn_context(world, RULES, history, max_moves=1000)
    system = "You are in a maze. " * 50
    agent = Scripted(ModelResponse(text="done"))
    run_turn(agent, system, world, RULES, Memory(50), context, budget=8, context_budget=1500)
    sent = agent.requests[0]
    kept = sent.messages[0].content["recent_actions"]
    assert 0 < len(kept) < 200 and kept == history[-len(kept):]
    assert sent.system_prompt == system
    assert estimate_tokens(sent.system_prompt) + estimate_tokens(sent.messages[0].content) < 1500


def test_no_budget_means_no_trimming():
    world = WorldState(position=(0, 0))
    history = [{"step": i} for i in range(300)]
    agent = Scripted(ModelResponse(text="done"))
    run_turn(agent, "s", world, RULES, Memory(50), turn_context(world, RULES, history, 1000), budget=8)
    assert len(agent.requests[0].messages[0].content["recent_actions"]) == 300


def test_a_deadline_ends_the_turn_before_a_call_that_would_not_fit_but_never_before_the_first():
    """The agent task's Lambda would time out during the next call: the turn stops and is written."""
    agent = Scripted(calls("move_east"), calls("move_east"), calls("move_east"))
    asked = []

    def deadline():
        asked.append(len(agent.requests))
        return len(agent.requests) >= 2

    world = WorldState(position=(0, 0))
    outcome = run_turn(agent, "system", world, RULES, Memory(50), turn_context(world, RULES, [], 100), 8,
                       deadline=deadline)
    assert outcome.end_reason == "deadline" and len(outcome.calls) == 2 and len(outcome.actions) == 2
    assert asked == [1, 2]  # checked before each call after the first
    always = Scripted(calls("move_east"))
    world = WorldState(position=(0, 0))
    first = run_turn(always, "system", world, RULES, Memory(50), turn_context(world, RULES, [], 100), 8,
                     deadline=lambda: True)
    assert first.end_reason == "deadline" and len(first.calls) == 1 and world.position == (1, 0)
