"""The replay regression corpus: a few small experiments, recorded once against the scripted model servers and kept
as JSON fixtures beside this file, that the suite replays (tests/integration/test_replay_corpus.py). A change to
the harness that alters a trajectory fails there with the first difference.

Together the scenarios cover every provider (Bedrock through a real boto3 client under botocore's Stubber, Ollama
and an OpenAI-compatible server over loopback HTTP), every memory mode (actions, conversation, summary with the map
and with the model's own compaction), a circuit breaker ending a turn and an experiment failing as stalled, give_up,
text tool calls, and a continuation across executions. Each runs through the local state machine on perfect-7.

Regenerate after a deliberate change to what the harness sends or stores (the fixtures then hold the new
trajectories; review the diff)::

    .venv/bin/python -m tests.replay_corpus.record

``dump`` and ``load`` move one experiment's rows (the experiment, its turns, actions and model calls, the request
parts its calls name and its maze) between databases through PostgreSQL's own JSON forms, so every column
survives as stored, bytes included; ``load`` gives the experiment a new id.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from psycopg import sql
from psycopg.types.json import Jsonb

from oriole.core.endings import cause_of
from oriole.core.maze import Maze, optimal_path_length
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import ExperimentStatus

HERE = Path(__file__).parent
MAZE = "perfect-7"
_CHILD_TABLES = ("turns", "actions", "model_calls")  # in the order their foreign keys need
_DUMPS = {
    "maze": "SELECT to_jsonb(m) AS row FROM mazes m JOIN experiments e ON e.maze_id = m.id WHERE e.id = %s",
    "experiment": "SELECT to_jsonb(e) AS row FROM experiments e WHERE e.id = %s",
    **{
        table: f"SELECT to_jsonb(t) AS row FROM {table} t WHERE t.experiment_id = %s ORDER BY t.ctid"
        for table in _CHILD_TABLES
    },
    "harness": """SELECT to_jsonb(h) AS row FROM harnesses h JOIN experiments e ON e.harness_hash = h.hash
                   WHERE e.id = %s""",
    "request_parts": """SELECT to_jsonb(p) AS row FROM request_parts p WHERE EXISTS (
                          SELECT 1 FROM model_calls c WHERE c.experiment_id = %s
                                                      AND strpos(c.request::text, p.hash) > 0) ORDER BY p.hash""",
}


def dump(conn, experiment_id: int) -> dict:
    """One experiment's rows as JSON (no sweep: a fixture stands alone)."""
    rows = {
        name: [r["row"] for r in conn.execute(query, (experiment_id,)).fetchall()] for name, query in _DUMPS.items()
    }
    (experiment,), (maze,) = rows.pop("experiment"), rows.pop("maze")
    experiment.update(sweep_id=None, replay_of=None)
    return {"maze": maze, "experiment": experiment, **rows}


def load(conn, fixture: dict) -> int:
    """The fixture's experiment inserted under a new id and execution names of its own (so a fixture loads any
    number of times; its maze and request parts are kept when already there); returns the id."""
    maze = fixture["maze"]
    found = conn.execute("SELECT id, content_hash FROM mazes WHERE name = %s", (maze["name"],)).fetchone()
    if found is None:
        _insert(conn, "mazes", maze)
        maze_id = maze["id"]
    elif found["content_hash"] != maze["content_hash"]:
        raise ValueError(f"maze {maze['name']!r} differs from the fixture's (content hash {found['content_hash']})")
    else:
        maze_id = found["id"]
    for part in fixture["request_parts"]:
        _insert(conn, "request_parts", part, on_conflict=True)
    for harness in fixture.get("harness", ()):  # the loop that ran it, as described then (a fixture's own)
        _insert(conn, "harnesses", harness, on_conflict=True)
    experiment, copy = fixture["experiment"], uuid.uuid4().hex[:8]
    experiment_id = _insert(
        conn,
        "experiments",
        {
            **_computed_since(experiment, maze),
            **experiment,
            **_rewritten_since(experiment),
            "maze_id": maze_id,
            "origin_execution_arn": f"{experiment['origin_execution_arn']}-{copy}",
            "execution_arns": [f"{arn}-{copy}" for arn in experiment["execution_arns"]],
        },
    )
    for table in _CHILD_TABLES:
        for row in fixture[table]:
            _insert(conn, table, {**row, "experiment_id": experiment_id, **_rewritten_since(experiment, table)})
    return experiment_id


def _rewritten_since(experiment: dict, table: str = "experiments") -> dict:
    """What the migrations since a fixture was recorded rewrote in stored rows, by the same rules: an unpriced
    model's cost is unknown, NULL in the experiment and its turns (0024), and its failed attempts' cost in the
    experiment (0032), not the $0 recorded before."""
    unpriced = experiment["llm_provider"] != "baseline" and not isinstance(experiment["config"].get("pricing"), dict)
    if not unpriced or table not in ("experiments", "turns"):
        return {}
    return {"cost_usd": None, **({"failed_cost_usd": None} if table == "experiments" else {})}


def _computed_since(experiment: dict, maze: dict) -> dict:
    """What the migrations since a fixture was recorded compute for a stored experiment, by the same rules: its
    ending's cause (0020) and the optimum of its goal condition (0021). A fixture's own values come first."""
    settings = ExperimentConfig.of(experiment["config"])
    grid = Maze.from_rows(maze["grid"], (maze["start_x"], maze["start_y"]), (maze["goal_x"], maze["goal_y"]))
    status, reason = ExperimentStatus(experiment["status"]), experiment["failure_reason"]
    return {
        "ending_cause": cause_of(status, reason),
        "optimal_path_length": optimal_path_length(settings.goal_condition, grid, settings.vision_range),
    }


def _insert(conn, table: str, row: dict, on_conflict: bool = False) -> int | None:
    """One row from its JSON form, its identity and generated columns left to the database."""
    columns = [
        c["column_name"]
        for c in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = %s AND is_identity = 'NO' AND is_generated = 'NEVER' ORDER BY ordinal_position",
            (table,),
        ).fetchall()
        if c["column_name"] in row
    ]
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    query = sql.SQL(
        "INSERT INTO {table} ({names}) SELECT {names} FROM jsonb_populate_record(NULL::{table}, %s)"
        "{conflict}{returning}"
    ).format(
        table=sql.Identifier(table),
        names=names,
        conflict=sql.SQL(" ON CONFLICT DO NOTHING" if on_conflict else ""),
        returning=sql.SQL(" RETURNING id" if table == "experiments" else ""),
    )
    cursor = conn.execute(query, (Jsonb(row),))
    return cursor.fetchone()["id"] if table == "experiments" else None


# The scenarios: each gives the execution input, with the scripted server it needs running for as long as the
# experiment runs (``bedrock`` is the Stubber of the local state machine's Bedrock client).


def _openai_stalled(bedrock) -> Iterator[dict]:
    """Actions memory; the circuit breaker (threshold 1) ends turns 2 and 3 on an unknown tool, and two turns
    without a valid action fail the experiment as stalled."""
    from tests import openai_server

    moves = _moves()
    with openai_server.ScriptedOpenAI(
        openai_server.tool_calls((moves[0], {"reasoning": "open corridor"})),
        openai_server.text_reply("Next turn."),
        openai_server.tool_calls(("move_diagonal", {})),
        openai_server.tool_calls(("jump", {"reasoning": "over the wall"})),
    ) as server:
        yield {
            "llmProvider": "openai",
            "modelName": "Qwen/Qwen3-8B",
            "config": {
                "baseUrl": server.base_url,
                "historyMode": "actions",
                "circuitBreakerThreshold": 1,
                "maxStalledTurns": 2,
            },
        }


def _ollama_text_tools_summary(bedrock) -> Iterator[dict]:
    """Text tool calls (``<tool_call>`` blocks in the answer's text) with summary memory (the map): walks to the
    goal."""
    from oriole.core.text_tool_calls import block
    from tests.ollama_server import ScriptedOllama, text_reply

    moves = _moves()

    def written(*names: str) -> dict:
        return text_reply("\n".join(block(name, {}) for name in names))

    with ScriptedOllama(
        written(*moves[:3]),
        text_reply("Looking around."),
        written(*moves[3:5]),
        text_reply("Onward."),
        written(*moves[5:]),
    ) as server:
        yield {
            "llmProvider": "ollama",
            "modelName": "qwen2.5:7b",
            "config": {"endpoint": server.url, "textToolCalls": True, "historyMode": "summary", "historyTurns": 1},
        }


def _bedrock_conversation_give_up(bedrock) -> Iterator[dict]:
    """Conversation memory through Bedrock; the model gives up in its second turn."""
    moves = _moves()
    for reply in (
        _converse(("t0", moves[0], {}), ("t1", moves[1], {"reasoning": "south"})),
        _converse(text="Pausing.", stop="end_turn"),
        _converse(("t2", "give_up", {"reason": "the maze is too twisty"})),
    ):
        bedrock.add_response("converse", reply)
    yield {
        "llmProvider": "bedrock",
        "modelName": "anthropic.claude-test-v1:0",
        "config": {"historyMode": "conversation", "enableGiveUp": True},
    }
    bedrock.assert_no_pending_responses()


def _openai_continued_compaction(bedrock) -> Iterator[dict]:
    """One turn per execution (a continuation after each), summary memory compacted by the model itself."""
    from tests import openai_server

    moves = _moves()
    with (
        openai_server.ScriptedOpenAI(
            openai_server.tool_calls((moves[0], {})),
            openai_server.text_reply("turn one done"),
            openai_server.tool_calls((moves[1], {})),
            openai_server.text_reply("turn two done"),
            openai_server.text_reply("Summary: two tiles south and east."),  # turn 1 compacted before turn 3
            *[openai_server.tool_calls((m, {})) for m in moves[2:]],
        ) as server
    ):
        yield {
            "llmProvider": "openai",
            "modelName": "Qwen/Qwen3-8B",
            "config": {
                "baseUrl": server.base_url,
                "historyMode": "summary",
                "historyTurns": 1,
                "compaction": "model",
                "maxTurnsPerExecution": 1,
            },
        }


SCENARIOS: dict[str, Callable] = {
    "openai-actions-breaker-stalled": _openai_stalled,
    "ollama-text-tools-summary": _ollama_text_tools_summary,
    "bedrock-conversation-give-up": _bedrock_conversation_give_up,
    "openai-summary-compaction-continued": _openai_continued_compaction,
}


def _moves() -> list[str]:
    from tests.integration.test_providers_local import shortest_moves

    return shortest_moves(MAZE)


def _converse(*tool_uses: tuple[str, str, dict], text: str | None = None, stop: str = "tool_use") -> dict:
    content = ([{"text": text}] if text else []) + [
        {"toolUse": {"toolUseId": use_id, "name": name, "input": arguments}} for use_id, name, arguments in tool_uses
    ]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 200, "outputTokens": 25, "totalTokens": 225},
        "metrics": {"latencyMs": 42},
    }


@contextmanager
def _recording_database() -> Iterator[str]:
    """A throwaway embedded PostgreSQL, migrated and holding the maze set."""
    import pgserver

    from oriole_workstation.database import prepare

    with tempfile.TemporaryDirectory() as directory:
        server = pgserver.get_server(Path(directory) / "data", cleanup_mode="delete")
        prepare(server.get_uri()).conn.close()
        yield server.get_uri()


def record() -> None:
    """Run every scenario through the local state machine and write its fixture."""
    import boto3
    from botocore.stub import Stubber

    from oriole.store import db
    from oriole_workstation.runner import LocalAws

    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )
    with _recording_database() as url, Stubber(client) as bedrock, LocalAws(url, bedrock_client=client) as aws:
        launcher, conn = aws.launcher(poll_seconds=0.05), db.connect(url)
        from oriole_workstation.results import Results

        results = Results(conn)
        for name, scenario in SCENARIOS.items():
            steps = contextmanager(scenario)(bedrock)
            with steps as execution_input:
                result = launcher.follow(launcher.start({"mazeId": MAZE, **execution_input}), results).as_json()
            fixture = dump(conn, result["experiment_id"])
            (HERE / f"{name}.json").write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")
            print(f"{name}: {result['status']}, {result['turns']} turns, {result['actions']} actions")
        conn.close()


if __name__ == "__main__":
    record()
