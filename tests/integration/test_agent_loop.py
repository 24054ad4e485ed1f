"""The agent loop's variables through the local state machine, against real model protocols: scripted
Ollama and OpenAI-compatible servers over real HTTP (the latter checking every request against the Chat
Completions spec) and a real boto3 Bedrock client under botocore's Stubber (every request is checked against
the service model). For each variable: what the model was sent turn by turn, what was
stored, and token totals equal to the sums of the calls."""

from __future__ import annotations

import json

import pytest

from oriole.core.memory import COMPACTION_PROMPT
from oriole.core.text_tool_calls import EXAMPLE, block
from tests import openai_server
from tests.integration.test_local_state_machine import assert_invariants
from tests.integration.test_providers_local import MAZE, converse_reply, openai, rows, run, shortest_moves
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls


@pytest.fixture(scope="module")
def local(bedrock_local):
    return bedrock_local


def ollama(server, **config) -> dict:
    return {
        "mazeId": MAZE,
        "llmProvider": "ollama",
        "modelName": "qwen2.5:7b",
        "config": {"endpoint": server.url, **config},
    }


def opening(server, turn_starts: list[int], turn: int) -> list[dict]:
    """The messages of a turn's first request (after the system prompt)."""
    return server.requests[turn_starts[turn - 1]].body["messages"][1:]


def parsed(messages: list[dict]) -> list[dict]:
    """Messages with their JSON content parsed: a stored message keeps its content, not its key order."""

    def content(text: str) -> object:
        try:
            return json.loads(text)
        except ValueError:
            return text

    return [{**m, "content": content(m["content"])} for m in messages]


def stored_totals(local, experiment_id: int) -> tuple[int, int]:
    calls = rows(local, "SELECT input_tokens, output_tokens FROM model_calls WHERE experiment_id = %s", experiment_id)
    return sum(c["input_tokens"] for c in calls), sum(c["output_tokens"] for c in calls)


def test_conversation_memory_carries_the_earlier_turns_and_still_walks_the_shortest_path(local):
    moves = shortest_moves(MAZE)  # 8 moves
    script = [
        tool_calls(*[(m, {}) for m in moves[:4]], prompt_eval_count=100, eval_count=10),
        tool_calls(*[(m, {}) for m in moves[3:6]], prompt_eval_count=200, eval_count=20),
        tool_calls(*[(m, {}) for m in moves[6:]], prompt_eval_count=300, eval_count=30),
    ]
    with ScriptedOllama(*script) as server:
        data = run(local, ollama(server, historyMode="conversation", maxActionsPerTurn=3))
    assert data["status"] == "succeeded" and data["actions"] == data["moves"] == 8 == data["shortest_path_length"]
    assert (data["input_tokens"], data["output_tokens"]) == (600, 60) == stored_totals(local, data["experiment_id"])
    first, second = opening(server, [0, 1, 2], 1), opening(server, [0, 1, 2], 2)
    assert [m["role"] for m in first] == ["user"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool", "tool", "tool", "user"]
    assert parsed(second[:1]) == parsed(first)  # turn 1's context, then its answer and every result
    assert [c["function"]["name"] for c in second[1]["tool_calls"]] == moves[:4]
    assert json.loads(second[5]["content"]) == {"success": False, "error": "not executed: the turn's budget is spent"}
    assert json.loads(second[4]["content"])["actions_left_in_turn"] == 0
    third = opening(server, [0, 1, 2], 3)
    assert parsed(third[: len(second)]) == parsed(second)  # the whole conversation so far, within the budget
    turns = rows(
        local,
        "SELECT closing_messages, context FROM turns WHERE experiment_id = %s ORDER BY turn_number",
        data["experiment_id"],
    )
    assert len(turns[0]["closing_messages"]) == 4 and turns[0]["context"] is None
    assert_invariants(local.store, data["experiment_id"])


def test_a_small_context_budget_drops_whole_earlier_turns_and_records_it(local):
    moves = shortest_moves(MAZE)
    script = [tool_calls((m, {"reasoning": "r" * 300})) for m in moves]
    with ScriptedOllama(*script) as server:
        data = run(local, ollama(server, historyMode="conversation", maxActionsPerTurn=1, numCtx=1500, numPredict=300))
    assert data["status"] == "succeeded" and data["actions"] == 8
    trims = rows(
        local,
        "SELECT turn_number, context FROM turns WHERE experiment_id = %s AND context IS NOT NULL ORDER BY turn_number",
        data["experiment_id"],
    )
    assert trims and all(t["context"]["dropped_turns"] >= 1 for t in trims)
    assert all(t["context"]["tokens_after"] <= 1200 < t["context"]["tokens_before"] for t in trims)  # 300 kept free
    last = server.requests[-1].body["messages"]
    assert last[1]["role"] == "user" and "position" in json.loads(last[1]["content"])  # starts on a whole turn


def test_the_map_aid_hands_every_turn_the_known_map_and_frontier_apart_from_memory(local):
    """The computed map and frontier are a planning aid named for what it is (mapAid), off by default, in every
    turn's context whatever the memory: not a summary (the retired compaction map, which the replay corpus holds)."""
    moves = shortest_moves(MAZE)
    script = [tool_calls(*[(m, {}) for m in moves[i : i + 2]]) for i in range(0, 8, 2)]
    with ScriptedOllama(*script) as server:
        data = run(local, ollama(server, mapAid=True, maxActionsPerTurn=2))
    assert data["status"] == "succeeded" and data["actions"] == 8
    contexts = [json.loads(server.requests[n].body["messages"][1]["content"]) for n in range(4)]
    assert all("memory_summary" not in c for c in contexts)
    aids = [c["map_aid"] for c in contexts]
    assert all(len(a["known_map"]) == 7 and all(len(row) == 7 for row in a["known_map"]) for a in aids)
    assert aids[0]["visited_tiles"] == 1 and aids[2]["known_map"][1][1] == "*" and aids[2]["visited_tiles"] >= 5
    assert all(a["frontier"] for a in aids[:3])
    [config] = rows(local, "SELECT config FROM experiments WHERE id = %s", data["experiment_id"])
    assert config["config"]["mapAid"] is True and "compaction" not in config["config"]  # no summary: no compaction
    with ScriptedOllama() as server:
        refused = local.run(ollama(server, historyMode="summary", compaction="map")).as_json()
    assert refused["status"] == "rejected" and not server.requests
    assert "config.compaction must be one of model; got 'map' (map is retired: " in refused["failure_reason"]


def test_a_setting_stored_only_where_it_plays_a_part_and_refused_where_it_would_not(local):
    """Through the local state machine: under historyMode actions and observation text no earlier turn is carried,
    nothing summarised and no picture drawn, so the snapshot holds no historyTurns, compaction or imageView (no
    comparison splits on them); an input that sets historyTurns there is rejected before anything starts (no row,
    no request), naming the key and what it needs; under conversation it is stored as given."""
    moves = shortest_moves(MAZE)
    with ScriptedOllama(tool_calls(*[(m, {}) for m in moves])) as server:
        data = run(local, ollama(server))
    [row] = rows(local, "SELECT config FROM experiments WHERE id = %s", data["experiment_id"])
    assert data["status"] == "succeeded" and row["config"]["historyMode"] == "actions"
    assert not {"historyTurns", "compaction", "imageView"} & set(row["config"]) and "textView" in row["config"]
    with ScriptedOllama() as server:
        refused = local.run(ollama(server, historyTurns=3)).as_json()
    assert refused["status"] == "rejected" and refused["experiment_id"] is None and not server.requests
    assert refused["failure_reason"] == (
        "InvalidConfig: config.historyTurns applies only with historyMode = conversation or summary (here "
        "historyMode is actions): it would play no part; leave it out, or set historyMode"
    )
    with ScriptedOllama(tool_calls(*[(m, {}) for m in moves])) as server:
        carried = run(local, ollama(server, historyMode="conversation", historyTurns=3))
    [row] = rows(local, "SELECT config FROM experiments WHERE id = %s", carried["experiment_id"])
    assert row["config"]["historyTurns"] == 3 and "compaction" not in row["config"]


def test_summary_model_asks_the_model_for_a_summary_in_an_accounted_call(local):
    moves = shortest_moves(MAZE)
    script = [
        tool_calls(*[(m, {}) for m in moves[0:3]], prompt_eval_count=100, eval_count=10),
        tool_calls(*[(m, {}) for m in moves[3:6]], prompt_eval_count=100, eval_count=10),
        text_reply("Went south then east; the corridor continues.", prompt_eval_count=70, eval_count=7),
        tool_calls(*[(m, {}) for m in moves[6:]], prompt_eval_count=100, eval_count=10),
    ]
    with ScriptedOllama(*script) as server:
        data = run(
            local, ollama(server, historyMode="summary", compaction="model", historyTurns=1, maxActionsPerTurn=3)
        )
    assert data["status"] == "succeeded" and data["actions"] == 8
    compaction = server.requests[2].body
    assert compaction["messages"][0]["content"] == COMPACTION_PROMPT and "tools" not in compaction
    assert json.loads(compaction["messages"][1]["content"])["turn"] == 1
    context = json.loads(server.requests[3].body["messages"][-1]["content"])
    assert context["memory_summary"] == {"summary": "Went south then east; the corridor continues."}
    calls = rows(
        local,
        "SELECT turn_number, kind, input_tokens FROM model_calls WHERE experiment_id = %s "
        "ORDER BY turn_number, call_index",
        data["experiment_id"],
    )
    assert [(c["turn_number"], c["kind"]) for c in calls] == [(1, "turn"), (2, "turn"), (3, "compaction"), (3, "turn")]
    turn3 = rows(
        local,
        "SELECT input_tokens, output_tokens FROM turns WHERE experiment_id = %s AND turn_number = 3",
        data["experiment_id"],
    )[0]
    assert (turn3["input_tokens"], turn3["output_tokens"]) == (170, 17)  # the summary's tokens are the turn's
    assert (data["input_tokens"], data["output_tokens"]) == (370, 37) == stored_totals(local, data["experiment_id"])
    memory = rows(local, "SELECT memory FROM experiments WHERE id = %s", data["experiment_id"])[0]["memory"]
    assert memory == {"summary": "Went south then east; the corridor continues.", "through_turn": 1}


def test_give_up_ends_the_experiment_as_an_agent_ending_with_the_models_reason(local):
    moves = shortest_moves(MAZE)
    with ScriptedOllama(
        tool_calls((moves[0], {}), ("give_up", {"reason": "it is hopeless"}), (moves[1], {}))
    ) as server:
        data = run(local, ollama(server, enableGiveUp=True))
    assert "give_up" in [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert data["status"] == "failed" and data["failure_reason"] == "agent_gave_up: it is hopeless"
    assert data["execution"]["error"] == "AgentGaveUp" and data["actions"] == 2
    actions = rows(
        local, "SELECT action_type FROM actions WHERE experiment_id = %s ORDER BY step_number", data["experiment_id"]
    )
    assert [a["action_type"] for a in actions] == [moves[0], "give_up"]
    assert_invariants(local.store, data["experiment_id"])


def test_text_tool_calls_let_a_model_without_native_tools_walk_the_shortest_path(local):
    moves = shortest_moves(MAZE)
    script = [text_reply("\n".join(block(m, {"reasoning": "ok"}) for m in moves[i : i + 4])) for i in (0, 4)]
    with ScriptedOllama(*script) as server:
        data = run(local, ollama(server, textToolCalls=True, maxActionsPerTurn=4))
    assert data["status"] == "succeeded" and data["actions"] == 8
    assert all("tools" not in r.body for r in server.requests)
    assert EXAMPLE in server.requests[0].body["messages"][0]["content"]
    calls = rows(local, "SELECT response FROM model_calls WHERE experiment_id = %s", data["experiment_id"])
    assert {c["source"] for call in calls for c in call["response"]["tool_calls"]} == {"text"}


def test_bedrock_conversation_memory_and_model_compaction_pass_the_service_model(local, bedrock):
    moves = shortest_moves(MAZE)
    bedrock.add_response("converse", converse_reply(*moves[0:3]))
    bedrock.add_response("converse", converse_reply(*moves[3:6]))
    bedrock.add_response("converse", converse_reply(text="A summary.", stop="end_turn", tokens=(50, 5)))
    bedrock.add_response("converse", converse_reply(*moves[6:]))
    sent = []
    bedrock.client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse",
        lambda params, **_: sent.append(json.loads(json.dumps(params))),
    )
    data = run(
        local,
        {
            "mazeId": MAZE,
            "llmProvider": "bedrock",
            "modelName": "anthropic.claude-test-v1:0",
            "config": {"historyMode": "summary", "compaction": "model", "historyTurns": 1, "maxActionsPerTurn": 3},
        },
    )
    bedrock.assert_no_pending_responses()
    assert data["status"] == "succeeded" and data["actions"] == 8
    assert "toolConfig" not in sent[2] and sent[2]["system"] == [{"text": COMPACTION_PROMPT}]
    second = sent[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    uses = [b["toolUse"]["toolUseId"] for b in second[1]["content"]]
    results = [b["toolResult"]["toolUseId"] for b in second[2]["content"] if "toolResult" in b]
    assert uses == results  # every call of the carried turn has its result
    assert (data["input_tokens"], data["output_tokens"]) == (200 * 3 + 50, 25 * 3 + 5)
    assert_invariants(local.store, data["experiment_id"])


def test_openai_conversation_memory_carries_the_servers_tool_call_ids_across_turns(local):
    moves = shortest_moves(MAZE)
    script = [
        openai_server.tool_calls(*[(m, {}) for m in moves[:4]], prompt_tokens=100, completion_tokens=10),
        openai_server.tool_calls(*[(m, {}) for m in moves[3:6]], prompt_tokens=200, completion_tokens=20),
        openai_server.tool_calls(*[(m, {}) for m in moves[6:]], prompt_tokens=300, completion_tokens=30),
    ]
    with openai_server.ScriptedOpenAI(*script) as server:
        data = run(local, openai(server, historyMode="conversation", maxActionsPerTurn=3, parallelToolCalls=True))
    assert data["status"] == "succeeded" and data["actions"] == data["moves"] == 8 == data["shortest_path_length"]
    assert (data["input_tokens"], data["output_tokens"]) == (600, 60) == stored_totals(local, data["experiment_id"])
    third = server.requests[2].body["messages"][1:]
    assert [m["role"] for m in third] == [
        "user",
        "assistant",
        *["tool"] * 4,
        "user",
        "assistant",
        *["tool"] * 3,
        "user",
    ]
    issued = [call["id"] for m in third if m["role"] == "assistant" for call in m["tool_calls"]]
    assert issued == [f"call_{i:04d}" for i in range(1, 8)] == [m["tool_call_id"] for m in third if m["role"] == "tool"]
    not_executed = json.loads(third[5]["content"])  # turn 1's fourth call, beyond its budget of 3
    assert not_executed["success"] is False and not_executed["error"].startswith("not executed")
    assert all(r.body["parallel_tool_calls"] is True for r in server.requests)
    assert_invariants(local.store, data["experiment_id"])


def test_text_tool_calls_over_the_openai_wire_send_no_tools(local):
    moves = shortest_moves(MAZE)
    script = [openai_server.text_reply("\n".join(block(m) for m in moves[i : i + 4])) for i in (0, 4)]
    with openai_server.ScriptedOpenAI(*script) as server:
        data = run(local, openai(server, textToolCalls=True, maxActionsPerTurn=4))
    assert data["status"] == "succeeded" and data["actions"] == 8
    assert all("tools" not in r.body and "parallel_tool_calls" not in r.body for r in server.requests)
    assert [m["role"] for m in server.requests[1].body["messages"]] == ["system", "user"]
