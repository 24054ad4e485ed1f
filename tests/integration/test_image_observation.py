"""Seeing the maze: experiments with ``observation`` image or both through the local state machine, against the
protocol servers (which decode every PNG they receive) and Bedrock under botocore's Stubber (every request checked
against the service model). Each request carries one picture; what is stored is its record, from which the exact
picture is drawn again."""

from __future__ import annotations

import base64
import hashlib

import pytest

from oriole.core import mazeset, picture
from tests import openai_server
from tests.integration.test_local_state_machine import assert_invariants
from tests.integration.test_providers_local import MAZE, rows, run, shortest_moves
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls
from tests.pictures import decode_png

VISION_MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"  # in the catalog's IMAGE_MODELS
AGENT_BLUE = picture.PALETTE[4]


@pytest.fixture(scope="module")
def local(bedrock_local):
    return bedrock_local


def stored_calls(local, experiment_id: int) -> list[dict]:
    return rows(
        local, "SELECT * FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index", experiment_id
    )


def sent_pictures(calls: list[dict]) -> list[dict]:
    """The picture records of the stored calls, in the order they were sent."""
    return [m["picture"] for c in calls for m in c["request_messages"] if "picture" in m]


def tiles_seen(local, experiment_id: int) -> list[list]:
    """Every action's sighting, in step order (what a map view is drawn again from)."""
    return [
        a["tiles_seen"]
        for a in rows(
            local, "SELECT tiles_seen FROM actions WHERE experiment_id = %s ORDER BY step_number", experiment_id
        )
    ]


def test_an_image_experiment_sends_a_png_the_server_decodes_in_every_request_and_walks_the_shortest_path(local):
    moves = shortest_moves(MAZE)
    replies = [openai_server.tool_calls((m, {"reasoning": "open"})) for m in moves[:3]]
    replies.append(openai_server.text_reply("Next turn."))
    replies += [openai_server.tool_calls((m, {})) for m in moves[3:]]
    with openai_server.ScriptedOpenAI(*replies) as server:
        data = run(
            local,
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": VISION_MODEL,
                "promptVersion": "v1-vision",
                "config": {"baseUrl": server.base_url, "observation": "image"},
            },
        )
    assert data["status"] == "succeeded" and data["goal_found"] and server.remaining == 0
    assert data["actions"] == data["moves"] == data["shortest_path_length"] == 8
    # every request carried exactly one PNG, decoded by the server, the agent's blue disc at its centre
    assert len(server.pictures) == len(server.requests) == 9
    for images in server.pictures:
        assert len(images) == 1
        image = images[0]
        assert (image.width, image.height) == (7 * picture.TILE_PX, 7 * picture.TILE_PX)
        assert image.colour(image.width // 2, image.height // 2) == AGENT_BLUE
    # image only: no tile is written in text, the picture's caption says what it shows
    for request in server.requests:
        assert "visible" not in str(request.body["messages"])
    exp_id = data["experiment_id"]
    config = rows(local, "SELECT config FROM experiments WHERE id = %s", exp_id)[0]["config"]
    assert (config["observation"], config["imageView"]) == ("image", "local")
    # stored: each picture's record (hash, size, what it showed), never its bytes; drawn again, the same bytes
    records = sent_pictures(stored_calls(local, exp_id))
    assert len(records) == 9 and [r["step"] for r in records] == [0, 1, 2, 3, 3, 4, 5, 6, 7]
    maze = mazeset.get_maze(MAZE).maze
    for record, request in zip(records, server.requests, strict=True):
        assert set(record) >= {"sha256", "bytes", "width", "height", "view", "position", "step", "vision_range"}
        assert "png" not in record and "data" not in str(record)
        parts = [p for m in request.body["messages"] if isinstance(m["content"], list) for p in m["content"]]
        sent = base64.b64decode(next(p for p in parts if p["type"] == "image_url")["image_url"]["url"].split(",")[1])
        assert hashlib.sha256(sent).hexdigest() == record["sha256"] and len(sent) == record["bytes"]
        assert picture.regenerate(record, maze).png == sent
    assert_invariants(local.store, exp_id)


def test_a_map_view_in_conversation_memory_sends_only_the_newest_picture_and_keeps_the_map(local):
    moves = shortest_moves(MAZE)
    script = [
        tool_calls((moves[0], {}), (moves[1], {})),
        text_reply("next turn"),
        *[tool_calls((m, {})) for m in moves[2:]],
    ]
    with ScriptedOllama(*script) as server:
        data = run(
            local,
            {
                "mazeId": MAZE,
                "llmProvider": "ollama",
                "modelName": "qwen2.5vl:7b",
                "config": {
                    "endpoint": server.url,
                    "observation": "both",
                    "imageView": "map",
                    "historyMode": "conversation",
                },
            },
        )
    assert data["status"] == "succeeded" and data["moves"] == 8 and server.remaining == 0
    assert [len(images) for images in server.pictures] == [1] * len(server.requests)
    unseen = [sum(row.count(0) for row in images[0].rows) for images in server.pictures]
    assert unseen == sorted(unseen, reverse=True) and unseen[-1] < unseen[0]  # the map only grows
    assert "visible" in str(server.requests[0].body["messages"])  # both: the tiles in text as well
    exp_id = data["experiment_id"]
    calls = stored_calls(local, exp_id)
    for record in sent_pictures(calls):
        assert record["view"] == "map" and record["width"] == 7 * picture.TILE_PX
        drawn = picture.regenerate(record, mazeset.get_maze(MAZE).maze, tiles_seen(local, exp_id))
        assert drawn.record == record
    memory = rows(local, "SELECT memory FROM experiments WHERE id = %s", exp_id)[0]["memory"]
    assert "map" in memory and set(memory["map"]) > {"?"}
    assert_invariants(local.store, exp_id)


def test_a_bedrock_request_carries_the_picture_as_an_image_block_after_the_tool_results(local, bedrock):
    from tests.integration.test_providers_local import converse_reply

    moves = shortest_moves(MAZE)
    sent: list[dict] = []

    def keep(params, **_):
        sent.append(params)

    events = bedrock.client.meta.events
    events.register("provide-client-params.bedrock-runtime.Converse", keep)
    try:
        bedrock.add_response("converse", converse_reply(*moves[:2]))
        for move in moves[2:]:
            bedrock.add_response("converse", converse_reply(move))
        data = run(
            local,
            {
                "mazeId": MAZE,
                "llmProvider": "bedrock",
                "modelName": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
                "config": {"observation": "image"},
            },
        )
    finally:
        events.unregister("provide-client-params.bedrock-runtime.Converse", keep)
    bedrock.assert_no_pending_responses()  # every request passed the service model's validation
    assert data["status"] == "succeeded" and data["moves"] == 8
    second = sent[1]["messages"]
    blocks = second[-1]["content"]
    assert [next(iter(b)) for b in blocks] == ["toolResult", "toolResult", "text", "image"]
    assert blocks[-1]["image"]["format"] == "png"
    decode_png(blocks[-1]["image"]["source"]["bytes"])
    assert all(sum("image" in b for m in s["messages"] for b in m["content"]) == 1 for s in sent)
    assert_invariants(local.store, data["experiment_id"])


def test_a_text_model_given_pictures_is_refused_at_start_with_the_reason(local, monkeypatch):
    count = "SELECT count(*) AS n FROM experiments"
    before = local.store.conn.execute(count).fetchone()["n"]
    with ScriptedOllama() as server:
        data = run(
            local,
            {
                "mazeId": MAZE,
                "llmProvider": "ollama",
                "modelName": "qwen2.5:7b",
                "config": {"endpoint": server.url, "observation": "image"},
            },
        )
    assert data["status"] == "rejected" and not server.requests
    assert data["failure_reason"].startswith(
        "InvalidConfig: config.observation image sends pictures, but model "
        "'qwen2.5:7b' is not marked as accepting images"
    )
    assert local.store.conn.execute(count).fetchone()["n"] == before
    # the deployment (or a local run's environment) marks it, and the same input starts
    monkeypatch.setenv("ORIOLE_VISION_MODELS", '["qwen2.5:7b"]')
    with ScriptedOllama(*[tool_calls((m, {})) for m in shortest_moves(MAZE)]) as server:
        data = run(
            local,
            {
                "mazeId": MAZE,
                "llmProvider": "ollama",
                "modelName": "qwen2.5:7b",
                "config": {"endpoint": server.url, "observation": "image"},
            },
        )
    assert data["status"] == "succeeded" and all(len(images) == 1 for images in server.pictures)


def test_an_image_condition_gets_no_text_map(local, monkeypatch):
    """observation image is the condition without text views: the map aid, text, applies only with text, and
    setting it with image is refused by name, saying what it needs."""
    monkeypatch.setenv("ORIOLE_VISION_MODELS", '["qwen2.5:7b"]')
    with ScriptedOllama() as server:
        config = {"endpoint": server.url, "observation": "image", "mapAid": True}
        data = run(local, {"mazeId": MAZE, "llmProvider": "ollama", "modelName": "qwen2.5:7b", "config": config})
    assert data["status"] == "rejected" and not server.requests
    assert data["failure_reason"].startswith(
        "InvalidConfig: config.mapAid applies only with observation = text or both (here observation is image)"
    )


def test_a_baseline_is_refused_a_picture_it_would_not_see(local):
    """A baseline reads the maze, not a picture: observation and imageView do not apply to it, and asking for them
    is refused by name (its stored configuration would otherwise claim a picture it never got)."""
    data = local.run(
        {
            "mazeId": MAZE,
            "llmProvider": "baseline",
            "modelName": "explorer",
            "config": {"observation": "image", "imageView": "map"},
        }
    ).as_json()
    assert data["status"] == "rejected" and data["experiment_id"] is None
    assert "imageView, observation do not apply to baseline experiments" in data["failure_reason"]
