"""The transcript holds, call by call, exactly what the model server received and what it returned: experiments
against the scripted OpenAI-compatible and Ollama servers (real HTTP, every request body and answer recorded by the
server) and Bedrock (a real boto3 client under botocore's Stubber, every request's parameters recorded as botocore
sends them), with the memory modes that carry, trim and compact the conversation, and text tool calls."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from oriole.core import mazeset
from oriole.core.text_tool_calls import block
from oriole_workstation import transcript as transcripts
from tests import openai_server
from tests.integration.test_image_observation import VISION_MODEL
from tests.integration.test_providers_local import MAZE, OPENAI_MODEL, converse_reply, shortest_moves
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls


@pytest.fixture(scope="module")
def local(bedrock_local):
    return bedrock_local


def canonical_hash(raw: bytes) -> str:
    """SHA-256 of a received body in canonical JSON (``oriole.providers.wire.sent_hash``), written out here."""
    canonical = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def call_lines(local, experiment_id: int) -> list[dict]:
    text = transcripts.render(transcripts.load(local.store.conn, experiment_id), "jsonl")
    return [line for line in map(json.loads, text.splitlines()) if line["type"] == "call"]


def stored_answers(local, experiment_id: int) -> list[bytes]:
    return [
        bytes(r["answer"])
        for r in local.store.conn.execute(
            "SELECT answer FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index", (experiment_id,)
        )
    ]


def openai_script(moves: list[str]) -> list[dict]:
    """Three turns: two moves then words; a move, an unknown tool, then words; the rest of the path (one call
    per answer: the server honours parallel_tool_calls false)."""
    return [
        openai_server.tool_calls((moves[0], {"reasoning": "east is open"})),
        openai_server.tool_calls((moves[1], '{"reasoning":"on"}')),
        openai_server.text_reply("I will keep going.", reasoning_content="the corridor bends"),
        openai_server.tool_calls((moves[2], {})),
        openai_server.tool_calls(("move_diagonal", {"reasoning": "shortcut"})),
        openai_server.text_reply("Back on track."),
        *[openai_server.tool_calls((m, {})) for m in moves[3:]],
    ]


@pytest.mark.parametrize(
    "config",
    [
        {"historyMode": "conversation", "historyTurns": 2},
        {"historyMode": "conversation", "contextTokens": 1400, "historyActions": 5},
        {"textToolCalls": True},
    ],
    ids=["conversation", "trimmed", "text-tool-calls"],
)
def test_an_openai_transcript_holds_every_request_the_server_received_and_every_answer_it_returned(local, config):
    moves = shortest_moves(MAZE)
    script = openai_script(moves)
    if config.get("textToolCalls"):
        script = [
            openai_server.text_reply(
                "\n".join(block(c["name"], c["arguments"]) for c in r["message"].get("tool_calls", ()))
                or r["message"]["content"]
            )
            for r in script
        ]
    with openai_server.ScriptedOpenAI(*script) as server:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": OPENAI_MODEL,
                "config": {"baseUrl": server.base_url, "temperature": 0.0, **config},
            }
        ).as_json()
    assert result["status"] == "succeeded", result
    lines = call_lines(local, result["experiment_id"])
    assert [line["request"] for line in lines] == [r.body for r in server.requests]
    # the hash stored at send time is the hash of the very body the server received, and the rebuild matches it
    assert [line["sent_sha256"] for line in lines] == [canonical_hash(r.raw) for r in server.requests]
    assert all(line["rebuilt_as_sent"] for line in lines)
    # who answered, as each answer said, kept beside it (model_calls.response)
    reported = [(json.loads(body)["model"], json.loads(body)["system_fingerprint"]) for _, body in server.answers]
    assert [(line["response"]["model"], line["response"]["system_fingerprint"]) for line in lines] == reported
    assert [line["answer"] for line in lines] == [json.loads(body) for _, body in server.answers]
    assert stored_answers(local, result["experiment_id"]) == [body for _, body in server.answers]
    if config.get("contextTokens"):  # the trimmed requests are rebuilt as trimmed, not as the full history
        contexts = local.store.conn.execute(
            "SELECT context FROM turns WHERE experiment_id = %s AND context IS NOT NULL", (result["experiment_id"],)
        ).fetchall()
        assert contexts and any(c["context"].get("dropped_turns") for c in contexts)
    elif config.get("historyMode"):
        assert lines[-1]["carried_turns"] == [1, 2]


def test_an_ollama_transcript_with_model_compaction_holds_the_compaction_calls_too(local):
    moves = shortest_moves(MAZE)
    script = [
        tool_calls((moves[0], {})),
        text_reply("turn one done"),
        tool_calls((moves[1], {"reasoning": "south"})),
        text_reply("turn two done"),
        text_reply("Summary: walked two tiles."),  # the compaction of turn 1, before turn 3
        *[tool_calls((m, {})) for m in moves[2:]],
    ]
    with ScriptedOllama(*script) as server:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "ollama",
                "modelName": "qwen2.5:7b",
                "config": {"endpoint": server.url, "historyMode": "summary", "historyTurns": 1, "compaction": "model"},
            }
        ).as_json()
    assert result["status"] == "succeeded", result
    lines = call_lines(local, result["experiment_id"])
    assert [line["kind"] for line in lines].count("compaction") == 1
    assert [line["request"] for line in lines] == [r.body for r in server.requests]
    assert [line["answer"] for line in lines] == [json.loads(body) for _, body in server.answers]
    assert stored_answers(local, result["experiment_id"]) == [body for _, body in server.answers]
    text = transcripts.render(transcripts.load(local.store.conn, result["experiment_id"]), "text")
    assert "Summary: walked two tiles." in text and "memory_summary" in text


def test_a_bedrock_transcript_holds_the_parameters_botocore_sent(local, bedrock):
    moves = shortest_moves(MAZE)
    sent: list[dict] = []

    def record(params, **kwargs):
        sent.append(json.loads(json.dumps(params)))

    replies = [converse_reply(*moves[:3]), converse_reply(text="Next.", stop="end_turn"), converse_reply(*moves[3:])]
    for reply in replies:
        bedrock.add_response("converse", reply)
    bedrock.client.meta.events.register("provide-client-params.bedrock-runtime.Converse", record)
    try:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "bedrock",
                "modelName": "anthropic.claude-test-v1:0",
                "config": {"historyMode": "conversation"},
            }
        ).as_json()
    finally:
        bedrock.client.meta.events.unregister("provide-client-params.bedrock-runtime.Converse", record)
    bedrock.assert_no_pending_responses()
    assert result["status"] == "succeeded", result
    lines = call_lines(local, result["experiment_id"])
    assert [line["request"] for line in lines] == sent
    assert [line["answer"] for line in lines] == replies
    assert all(line["rebuilt_as_sent"] for line in lines)  # Converse's parameters, hashed as sent


def test_the_html_transcript_shows_the_system_prompt_once_and_every_turn(local):
    row = local.store.conn.execute(
        "SELECT max(experiment_id) AS id FROM model_calls WHERE answer IS NOT NULL AND kind = 'turn'"
    ).fetchone()
    transcript = transcripts.load(local.store.conn, row["id"])
    page = transcripts.page(transcript)
    assert page.count('class="system"') == len(transcript.systems) == 1
    assert page.count('class="turn"') == len(transcript.turns)


@pytest.mark.parametrize(
    "config",
    [
        {"observation": "image"},
        {"observation": "both", "imageView": "map", "historyMode": "conversation", "historyTurns": 2},
    ],
    ids=["image-local", "both-map-conversation"],
)
def test_an_image_transcript_holds_every_request_the_server_received_pictures_included(local, config):
    """Each picture is drawn again from its stored record (checked by its hash) and put on the wire: the rebuilt
    bodies equal what the server received, data URLs byte for byte; the pages show the pictures."""
    with openai_server.ScriptedOpenAI(*openai_script(shortest_moves(MAZE))) as server:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": VISION_MODEL,
                "promptVersion": "v1-vision",
                "config": {"baseUrl": server.base_url, **config},
            }
        ).as_json()
    assert result["status"] == "succeeded", result
    transcript = transcripts.load(local.store.conn, result["experiment_id"])
    lines = [
        line for line in map(json.loads, transcripts.render(transcript, "jsonl").splitlines()) if line["type"] == "call"
    ]
    assert [line["request"] for line in lines] == [r.body for r in server.requests]
    assert len(server.pictures) == len(server.requests) and all(len(p) == 1 for p in server.pictures)
    page = transcripts.page(transcript)
    sent = {
        next(
            p["image_url"]["url"]
            for m in r.body["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image_url"
        )
        for r in server.requests
    }
    shown = set(re.findall(r'<img class="picture" src="([^"]+)"', page))
    assert shown == sent  # every picture sent is shown, as sent (a later call's new picture on its own message)
    text = transcripts.render(transcript, "text")
    assert text.count("picture: {") == len(server.requests)
    assert f'"view": "{config.get("imageView", "local")}"' in text


def test_a_picture_whose_record_no_longer_draws_it_is_refused_by_name(local):
    with openai_server.ScriptedOpenAI(*openai_script(shortest_moves(MAZE))) as server:  # its own image experiment
        row = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": VISION_MODEL,
                "promptVersion": "v1-vision",
                "config": {"baseUrl": server.base_url, "observation": "image"},
            }
        ).as_json()
    assert row["status"] == "succeeded", row
    calls = local.store.conn.execute(
        "SELECT * FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index", (row["experiment_id"],)
    ).fetchall()
    for call in calls:
        for message in call["request_messages"]:
            if "picture" in message:
                message["picture"]["sha256"] = "0" * 64
    experiment = local.store.conn.execute(transcripts._EXPERIMENT, (row["experiment_id"],)).fetchone()
    with pytest.raises(transcripts.TranscriptUnavailable, match=r"turn 1 call 1: the .* view of step 0 drawn again"):
        transcripts.build(
            experiment,
            local.store.conn.execute(transcripts._TURNS, {"id": row["experiment_id"], "upto": None}).fetchall(),
            calls,
            [],
            {r["hash"]: r["body"] for r in local.store.conn.execute("SELECT hash, body FROM request_parts")},
            mazeset.get_maze(MAZE).maze,
        )


def test_a_call_whose_rebuild_differs_from_what_it_sent_is_marked(local, monkeypatch):
    """A transcript made after the adapter changed shows today's rebuild and says it is not what was sent."""
    from oriole.providers import openai

    with openai_server.ScriptedOpenAI(*openai_script(shortest_moves(MAZE))) as server:
        result = local.run(
            {"mazeId": MAZE, "llmProvider": "openai", "modelName": OPENAI_MODEL, "config": {"baseUrl": server.base_url}}
        ).as_json()
    assert result["status"] == "succeeded", result
    wire = openai.wire_request
    monkeypatch.setattr(openai, "wire_request", lambda request, settings: {**wire(request, settings), "altered": True})
    transcript = transcripts.load(local.store.conn, result["experiment_id"])
    assert [line["rebuilt_as_sent"] for line in call_lines(local, result["experiment_id"])] == [False] * len(
        server.requests
    )
    assert "REBUILT REQUEST DIFFERS from the one sent" in transcripts.render(transcript, "text")
    assert 'class="sent differs"' in transcripts.page(transcript)
