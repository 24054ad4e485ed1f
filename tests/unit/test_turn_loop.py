"""The shared turn loop with a scripted agent standing in for a model."""

from oriole.core import text_tool_calls
from oriole.core.maze import Maze
from oriole.core.tools import RecallWindow, Rules, ToolCall, WorldState, tool_specs
from oriole.core.turn_loop import Message, ModelResponse, TurnSettings, Usage, estimate_tokens, run_turn, turn_context

MAZE = Maze.from_rows([[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]], (0, 0), (11, 0))
RULES = Rules(MAZE, vision_range=2, goal_condition="reach", recall_interval=10, max_recall_actions=50)


class Scripted:
    """Answers each request with the next scripted response and records what it was asked."""

    def __init__(self, *responses, context_budget=None):
        self.responses = list(responses)
        self.requests = []
        self.context_budget = context_budget

    def respond(self, request):
        self.requests.append(request)
        return self.responses.pop(0)


def calls(*names):
    return ModelResponse(
        tool_calls=tuple(ToolCall(n, {}, call_id=f"c{i}") for i, n in enumerate(names)), usage=Usage(100, 10, 5)
    )


def turn(agent, budget=8, position=(0, 0), **settings):
    world = WorldState(position=position)
    context = turn_context(world, RULES, [], max_actions=100)
    return run_turn(
        agent,
        "system",
        world,
        RULES,
        RecallWindow(50),
        context,
        TurnSettings(budget=budget, actions_left=100, **settings),
    ), world


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
    world = WorldState(position=(3, 0), action_count=5)
    context = turn_context(world, RULES, [{"step": 5, "action": "move_east"}], max_actions=100)
    assert context["position"] == [3, 0] and context["step"] == 5 and context["actions_left"] == 95
    assert context["maze_size"] == [12, 1]
    assert context["visible"]["open"] == [[1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]
    assert "experiment" not in str(context)


def test_history_is_trimmed_oldest_first_to_the_context_budget_never_the_system_prompt():
    world = WorldState(position=(0, 0))
    history = [{"step": i, "action": "move_east", "position": [i, 0], "success": True} for i in range(1, 201)]
    context = turn_context(world, RULES, history, max_actions=1000)
    system = "You are in a maze. " * 50
    agent = Scripted(ModelResponse(text="done"), context_budget=1500)
    run_turn(agent, system, world, RULES, RecallWindow(50), context, TurnSettings(budget=8, actions_left=1000))
    sent = agent.requests[0]
    kept = sent.messages[0].content["recent_actions"]
    assert 0 < len(kept) < 200 and kept == history[-len(kept) :]
    assert sent.system_prompt == system
    assert estimate_tokens(sent.system_prompt) + estimate_tokens(sent.messages[0].content) < 1500


def test_no_budget_means_no_trimming():
    world = WorldState(position=(0, 0))
    history = [{"step": i} for i in range(300)]
    agent = Scripted(ModelResponse(text="done"))
    run_turn(
        agent,
        "s",
        world,
        RULES,
        RecallWindow(50),
        turn_context(world, RULES, history, 1000),
        TurnSettings(budget=8, actions_left=1000),
    )
    assert len(agent.requests[0].messages[0].content["recent_actions"]) == 300


# --- the agent loop's variables ---------------------------------------------------------------------------

WALLED = Maze.from_rows([[0, 1, 0, 2]], (0, 0), (3, 0))  # east of the start is a wall
WALLED_RULES = Rules(WALLED, vision_range=1, goal_condition="reach", recall_interval=10, max_recall_actions=50)


def test_calls_beyond_the_turns_end_get_a_result_but_are_not_actions():
    outcome, world = turn(Scripted(calls(*["move_east"] * 5)), budget=3)
    assert outcome.end_reason == "action_budget" and len(outcome.actions) == 3 and world.action_count == 3
    assert [m.role for m in outcome.closing] == ["tool"] * 5
    assert [m.tool_call_id for m in outcome.closing] == ["c0", "c1", "c2", "c3", "c4"]
    skipped = [m.content for m in outcome.closing[3:]]
    assert skipped == [{"success": False, "error": "not executed: the turn's budget is spent"}] * 2


def test_every_tool_result_tells_the_actions_left_in_the_turn_and_the_experiment():
    agent = Scripted(calls("move_east", "move_east"), ModelResponse(text="ok"))
    turn(agent, budget=5)
    results = [m.content for m in agent.requests[1].messages if m.role == "tool"]
    assert [(r["actions_left_in_turn"], r["actions_left"]) for r in results] == [(4, 99), (3, 98)]


def test_the_circuit_breaker_threshold_is_a_setting():
    outcome, _ = turn(Scripted(calls("fly", "fly", "fly", "fly", "fly")), circuit_breaker=5)
    assert outcome.end_reason == "circuit_breaker" and len(outcome.actions) == 5


def test_the_same_failing_action_repeated_ends_the_turn_with_its_own_reason():
    world = WorldState(position=(0, 0))
    agent = Scripted(calls(*["move_east"] * 6))
    outcome = run_turn(
        agent,
        "s",
        world,
        WALLED_RULES,
        RecallWindow(50),
        turn_context(world, WALLED_RULES, [], 100),
        TurnSettings(budget=8, actions_left=100, repetition_limit=4),
    )
    assert outcome.end_reason == "repetition" and len(outcome.actions) == 4
    assert outcome.closing[3].content["turn_ended"] == "the same failing action was repeated"
    assert outcome.closing[4].content["error"] == "not executed: the same failing action was repeated"
    off = run_turn(
        Scripted(calls(*["move_east"] * 6), ModelResponse(text="ok")),
        "s",
        WorldState(position=(0, 0)),
        WALLED_RULES,
        RecallWindow(50),
        turn_context(world, WALLED_RULES, [], 100),
        TurnSettings(budget=8, actions_left=100),
    )  # repetition_limit 0: the breaker is off
    assert off.end_reason == "no_tool_call" and len(off.actions) == 6


def test_give_up_is_offered_only_when_enabled_and_ends_the_turn_with_the_reason():
    give_up = ModelResponse(tool_calls=(ToolCall("give_up", {"reason": "no way through"}, "g"),))
    outcome, world = turn(Scripted(give_up, ModelResponse(text="ok")))
    assert outcome.actions[0].action_type == "invalid" and world.gave_up_reason is None
    agent = Scripted(give_up)
    outcome, world = turn(agent, tools=tool_specs(give_up=True))
    assert "give_up" in [t.name for t in agent.requests[0].tools]
    assert outcome.end_reason == "gave_up" and world.gave_up_reason == "no way through"
    assert outcome.actions[0].action_type == "give_up" and outcome.actions[0].success
    nameless = ModelResponse(tool_calls=(ToolCall("give_up", {}, "g"),))
    outcome, world = turn(Scripted(nameless, ModelResponse(text="ok")), tools=tool_specs(give_up=True))
    assert outcome.actions[0].action_type == "invalid" and "needs a 'reason'" in outcome.actions[0].error


def test_text_tool_calls_are_read_from_the_answer_and_the_tools_are_described_not_sent():
    text = (
        'I will go east twice, not <tool_call>{"name": "move_south"}</tool_call> as before.\n'
        '<tool_call>\n{"name": "move_east", "arguments": {"reasoning": "open"}}\n</tool_call>\n'
        '```\n<tool_call>{"name": "move_west"}</tool_call>\n```\n> <tool_call>{"name": "move_west"}</tool_call>\n'
        '  <tool_call>{"name": "move_east"}</tool_call> then {"tool": "fly"}\n<tool_call>{"name": "fly"}</tool_call>'
    )
    agent = Scripted(ModelResponse(text=text), ModelResponse(text="done"))
    outcome, world = turn(agent, text_tool_calls=True)
    assert agent.requests[0].tools == () and text_tool_calls.EXAMPLE in agent.requests[0].system_prompt
    assert [a.action_type for a in outcome.actions] == ["move_east", "move_east", "invalid"]
    assert outcome.actions[0].reasoning == "open" and world.position == (2, 0)
    assert {c.source for c in outcome.calls[0].response.tool_calls} == {"text"}
    follow_up = agent.requests[1].messages
    assert [m.role for m in follow_up] == ["user", "assistant", "user", "user", "user"]
    assert follow_up[1].tool_calls == () and follow_up[2].content["tool_result"] == "move_east"


def test_earlier_turns_are_carried_whole_and_dropped_oldest_first_to_fit_the_budget():
    def earlier(n):
        call = ToolCall("move_east", {"reasoning": "x" * 400}, f"h{n}")
        return [
            Message("user", {"turn": n}),
            Message("assistant", None, (call,)),
            Message("tool", {"success": True, "pad": "y" * 400}, tool_call_id=f"h{n}", name="move_east"),
        ]

    history = [earlier(n) for n in range(1, 6)]
    agent = Scripted(ModelResponse(text="done"), context_budget=1200)
    outcome, _ = turn_with(agent, history)
    sent = agent.requests[0].messages
    carried = [m.content["turn"] for m in sent if isinstance(m.content, dict) and "turn" in m.content]
    assert carried and carried == list(range(6 - len(carried), 6))  # the newest, whole, in order
    assert all(m.tool_call_id in {c.call_id for s in sent for c in s.tool_calls} for m in sent if m.role == "tool")
    assert (
        outcome.trim.dropped_turns == 5 - len(carried)
        and outcome.trim.tokens_after <= 1200 < outcome.trim.tokens_before
    )
    assert outcome.calls[0].new_messages[0].content["position"] == [0, 0]  # history is not stored again


def test_without_a_budget_every_earlier_turn_is_carried():
    history = [[Message("user", {"turn": n})] for n in range(1, 4)]
    agent = Scripted(ModelResponse(text="done"))
    outcome, _ = turn_with(agent, history)
    assert [m.content.get("turn") for m in agent.requests[0].messages[:3]] == [1, 2, 3] and outcome.trim is None


def turn_with(agent, history):
    world = WorldState(position=(0, 0))
    context = turn_context(world, RULES, [], max_actions=100)
    return run_turn(
        agent, "system", world, RULES, RecallWindow(50), context, TurnSettings(budget=8, actions_left=100), history
    ), world


def test_the_token_budget_ends_the_turn_before_a_call_once_used_but_never_before_the_first():
    agent = Scripted(*[calls("move_east")] * 5)  # each call uses 110 tokens
    outcome, world = turn(agent, tokens_left=250)
    assert outcome.end_reason == "max_tokens" and len(agent.requests) == 3 and world.position == (3, 0)
    assert [m.content["tokens_left"] for m in outcome.closing] == [0]
    first = agent.requests[1].messages[-1].content
    assert first["tokens_left"] == 140  # what the budget leaves after the first call, in every tool result
    spent, _ = turn(Scripted(calls("move_east"), calls("move_east")), tokens_left=0)
    assert spent.end_reason == "max_tokens" and len(spent.calls) == 1  # the first call is always made
    unlimited, _ = turn(Scripted(calls("move_east"), ModelResponse(text="done")))
    assert "tokens_left" not in unlimited.calls[1].new_messages[-1].content


def test_a_deadline_ends_the_turn_before_a_call_that_would_not_fit_but_never_before_the_first():
    """The agent task's Lambda would time out during the next call: the turn stops and is written."""
    agent = Scripted(calls("move_east"), calls("move_east"), calls("move_east"))
    asked = []

    def deadline():
        asked.append(len(agent.requests))
        return len(agent.requests) >= 2

    world = WorldState(position=(0, 0))
    outcome = run_turn(
        agent,
        "system",
        world,
        RULES,
        RecallWindow(50),
        turn_context(world, RULES, [], 100),
        TurnSettings(budget=8, actions_left=100, deadline=deadline),
    )
    assert outcome.end_reason == "deadline" and len(outcome.calls) == 2 and len(outcome.actions) == 2
    assert asked == [1, 2]  # checked before each call after the first
    always = Scripted(calls("move_east"))
    world = WorldState(position=(0, 0))
    first = run_turn(
        always,
        "system",
        world,
        RULES,
        RecallWindow(50),
        turn_context(world, RULES, [], 100),
        TurnSettings(budget=8, actions_left=100, deadline=lambda: True),
    )
    assert first.end_reason == "deadline" and len(first.calls) == 1 and world.position == (1, 0)
    assert [m.role for m in first.closing] == ["tool"]  # the last answer's result is kept for the next turn


def test_with_pictures_each_request_carries_only_the_newest_view_and_no_tiles_in_text():
    from oriole.core.picture import IMAGE, Camera, ImageView, Observation

    agent = Scripted(calls("move_east", "move_east"), calls("move_east"), ModelResponse(text="done"))
    camera = Camera(ImageView.LOCAL, MAZE, RULES.vision_range)
    outcome, world = turn(agent, observation=Observation(IMAGE, ImageView.LOCAL), camera=camera)
    assert outcome.end_reason == "no_tool_call" and world.position == (3, 0)
    for request in agent.requests:
        pictured = [m for m in request.messages if m.picture is not None]
        assert len(pictured) == 1 and pictured[0] is request.messages[-1]
        assert "visible" not in str([m.content for m in request.messages])
    assert [r.messages[-1].picture.params["position"] for r in agent.requests] == [[0, 0], [2, 0], [3, 0]]
    # a call's new messages keep their picture (stored as its record); a later request drops the older ones
    assert agent.requests[2].messages[0].picture is None and "picture" in agent.requests[2].messages[0].content
    assert [m.role for m in outcome.calls[1].new_messages] == ["tool", "tool", "user"]


def test_the_text_map_view_writes_the_map_where_the_map_picture_goes_and_no_tiles_in_the_results():
    from oriole.core.known_map import KnownMap
    from oriole.core.picture import TEXT, ImageView, Observation

    agent = Scripted(calls("move_east", "move_east"), calls("move_east"), ModelResponse(text="done"))
    mapped = KnownMap((MAZE.width, MAZE.height))
    outcome, world = turn(agent, observation=Observation(TEXT, text_view=ImageView.MAP), mapped=mapped)
    assert outcome.end_reason == "no_tool_call" and world.position == (3, 0)
    sent = agent.requests[-1].messages  # the whole turn: its opening, the answers, results and views
    views = [m.content["map_view"] for m in sent if isinstance(m.content, dict) and "map_view" in m.content]
    assert len(views) == 3 and all(v["view"] == "map" and len(v["rows"]) == MAZE.height for v in views)
    assert "visible" not in str([m.content for r in agent.requests for m in r.messages])
    assert views[0]["rows"][0][3] == "?" and views[1]["rows"][0][3] == "."  # the second move saw (3, 0)
    assert [r.messages[-1].content["position"] for r in agent.requests[1:]] == [[2, 0], [3, 0]]
    assert [m.role for m in outcome.calls[1].new_messages] == ["tool", "tool", "user"]  # as the picture's message


def test_the_prompt_budget_keeps_the_answers_room_free_up_to_half_the_window():
    from oriole.core.turn_loop import prompt_budget

    assert prompt_budget(32768, 1024) == 31744
    assert prompt_budget(2000, 1024) == 1000  # an answer limit past half the window: half is kept
    assert prompt_budget(4096, 0) == 4096
