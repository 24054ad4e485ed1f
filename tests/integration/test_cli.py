"""The ``oriole`` command in process, against the test database (DATABASE_URL)."""

import gc
import json
import re

import pytest

from oriole import catalog
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest


@pytest.fixture(scope="module")
def database_url(module_database):
    """A database of this file's own: ``ls --json`` and the exports read every experiment of the database, and a
    row another file left there on purpose (a tampered snapshot, in a replay test) is not this file's to read."""
    return module_database


def test_run_json_prints_one_object_with_the_documented_keys(cli):
    result = cli("run", "--maze", "perfect-11", "--agent", "oracle", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in (
        "experiment_id",
        "status",
        "goal_found",
        "actions",
        "turns",
        "shortest_path_length",
        "path_efficiency",
        "failure_reason",
    ):
        assert key in data
    assert data["status"] == "succeeded" and data["actions"] == data["shortest_path_length"]


def test_a_run_hands_the_set_up_it_froze_back_to_the_collector_when_it_closes(cli):
    """The runner freezes its set-up out of full collections while it runs (test_local_state_machine); once the
    command is done, nothing is left frozen."""
    gc.unfreeze()  # whatever an earlier runner of this process left: this run's own freeze is what is checked
    assert cli("run", "--agent", "oracle", "--maze", "perfect-7").exit_code == 0
    assert gc.get_freeze_count() == 0


def test_run_prints_a_summary_and_how_to_query_it(cli):
    result = cli("run", "--maze", "sparse-60", "--agent", "random", "--max-moves", "50", "--config", "visionRange=2")
    assert result.exit_code == 0, result.output
    assert "out of moves" in result.stdout and "max_moves reached: 50 actions" in result.stdout
    assert 'oriole db psql -c "SELECT' in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("run", "--agent", "genius"), "--agent must be one of"),
        (("run", "--agent", "random", "--config", "maxMovez=3"), "unknown config key"),
        (("run", "--agent", "random", "--config", "maxMoves"), "expects KEY=VALUE"),
        (("run",), "say what runs the maze"),
        (("run", "--agent", "random", "--maze", "nowhere"), "nowhere"),
    ],
)
def test_bad_arguments_get_a_clear_error(cli, args, message):
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.output


def test_mazes_list_and_show(cli):
    listing = cli("mazes", "list")
    assert listing.exit_code == 0 and "sparse-60" in listing.stdout and "perfect-31" in listing.stdout
    shown = cli("mazes", "show", "perfect-7")
    lines = shown.stdout.splitlines()
    assert shown.exit_code == 0 and lines[1:] == [line for line in lines[1:] if set(line) <= set("#.SG")]
    assert len(lines[1:]) == 7 and "S" in shown.stdout and "G" in shown.stdout
    assert cli("mazes", "show", "nope").exit_code == 2


def test_params_list_and_db_url(cli, database_url):
    params = cli("params", "list")
    assert params.exit_code == 0 and "/oriole/experiments/max-moves" in params.stdout
    shown = " ".join(params.stdout.split())
    assert "Applies only with historyMode = conversation or summary." in shown  # historyTurns says when it applies
    assert cli("db", "url").stdout.strip() == database_url


def test_prompts_put_list_show_and_a_run_with_the_new_version(cli, tmp_path):
    from tests.ollama_server import ScriptedOllama, text_reply

    prompt = tmp_path / "terse.md"
    prompt.write_text("Find the goal. Use one tool per answer.\n")
    assert cli("prompts", "put", "terse-1", "--file", str(prompt)).exit_code == 0
    listing = cli("prompts", "list")
    assert "terse-1" in listing.stdout and "v1" in listing.stdout
    assert cli("prompts", "show", "terse-1").stdout == "Find the goal. Use one tool per answer.\n"
    assert cli("prompts", "show", "nope").exit_code == 2
    assert "must be 1-64" in cli("prompts", "put", "bad version", "--file", str(prompt)).output
    with ScriptedOllama(text_reply("I give up."), text_reply("Still thinking.")) as server:
        result = cli(
            "run",
            "--maze",
            "perfect-7",
            "--provider",
            "ollama",
            "--model",
            "tiny",
            "--prompt",
            "terse-1",
            "--ollama-url",
            server.url,
            "--max-moves",
            "2",
            "--config",
            "maxDurationMinutes=0.0001",
            "--json",
        )
    data = json.loads(result.stdout)
    assert data["status"] == "timed_out" and data["actions"] == 0
    assert server.requests[0].body["messages"][0]["content"] == "Find the goal. Use one tool per answer.\n"


def test_run_refuses_an_unknown_provider(cli):
    result = cli("run", "--provider", "azure", "--model", "gpt")
    assert result.exit_code == 2 and "--provider must be one of bedrock, ollama, openai" in result.output


class ConverseEndpoint:
    """A loopback HTTP endpoint answering Bedrock Runtime's Converse operation with scripted bodies."""

    def __init__(self, *bodies: dict):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.bodies, self.paths = list(bodies), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.paths.append(self.path)
                payload = json.dumps(outer.bodies.pop(0)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def test_run_with_bedrock_calls_the_endpoint_with_the_users_credentials_through_moto(cli, monkeypatch):
    move = {"toolUse": {"toolUseId": "t1", "name": "move_east", "input": {}}}
    body = {
        "output": {"message": {"role": "assistant", "content": [move]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 11, "outputTokens": 3, "totalTokens": 14},
        "metrics": {"latencyMs": 5},
    }
    endpoint = ConverseEndpoint(body, body)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", endpoint.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "user-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "user-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    result = cli(
        "run",
        "--maze",
        "perfect-7",
        "--provider",
        "bedrock",
        "--model",
        "vendor.model-v1:0",
        "--max-moves",
        "2",
        "--config",
        "maxActionsPerTurn=1",
        "--json",
    )
    endpoint.server.shutdown()
    data = json.loads(result.stdout)
    assert data["status"] == "timed_out" and data["actions"] == 2 and data["input_tokens"] == 22
    assert endpoint.paths == ["/model/vendor.model-v1%3A0/converse"] * 2


def test_prompts_with_aws_use_parameter_store(cli, monkeypatch, tmp_path):
    from moto import mock_aws

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    long_prompt = tmp_path / "long.md"
    long_prompt.write_text("Explore. " * 500)  # over 4 KB: needs the advanced tier
    with mock_aws():
        assert cli("prompts", "put", "v7", "--file", str(long_prompt), "--aws").exit_code == 0
        import boto3

        stored = boto3.client("ssm").get_parameter(Name="/oriole/prompts/v7")["Parameter"]
        assert stored["Value"] == long_prompt.read_text()
        assert "v7" in cli("prompts", "list", "--aws").stdout
        assert cli("prompts", "show", "v7", "--aws").stdout.startswith("Explore. Explore.")


def test_version_and_short_help(cli):
    import oriole

    assert cli("--version").stdout == f"oriole {oriole.__version__}\n"
    assert "Usage: root [OPTIONS] COMMAND" in cli("-h").stdout and "Usage:" in cli("sweep", "-h").stdout


def test_run_takes_a_seed_stores_it_and_the_same_seed_walks_the_same_path(cli, store):
    runs = [
        json.loads(
            cli("run", "--agent", "random", "--maze", "perfect-9", "--seed", "42", "--max-moves", "20", "--json").stdout
        )
        for _ in range(2)
    ]
    walks = [
        store.conn.execute(
            "SELECT to_x, to_y FROM actions WHERE experiment_id = %s ORDER BY step_number", (run["experiment_id"],)
        ).fetchall()
        for run in runs
    ]
    seeds = {
        store.conn.execute("SELECT seed FROM experiments WHERE id = %s", (run["experiment_id"],)).fetchone()["seed"]
        for run in runs
    }
    assert seeds == {42} and len(walks[0]) == 20 and walks[0] == walks[1]


def test_a_typod_config_key_gets_a_did_you_mean(cli):
    refused = cli("run", "--agent", "random", "-c", "maxMove=3")
    assert refused.exit_code == 2 and "unknown config key 'maxMove' (did you mean maxMoves?)" in refused.stderr


def test_a_config_key_that_would_play_no_part_is_refused_with_exit_2_before_the_model_is_asked(cli):
    """historyTurns under the default historyMode (actions) carries nothing: `--config` refuses it, exit 2, with
    what it needs; no experiment is stored (the model server, never reached, need not exist)."""
    refused = cli("run", "--provider", "ollama", "--model", "qwen3:8b", "-c", "historyTurns=3")
    assert refused.exit_code == 2, refused.output
    assert "config.historyTurns applies only with historyMode = conversation or summary" in refused.output


def printed_json(result):
    """What a command printed on stdout, read as JSON once it exited 0: a refusal fails here, naming why."""
    assert result.exit_code == 0, f"exit {result.exit_code}: {result.stderr}"
    return json.loads(result.stdout)


def test_json_output_has_numbers_as_numbers_and_iso_timestamps(cli):
    cli("run", "--agent", "oracle", "--maze", "perfect-7", "--json")
    [row] = printed_json(cli("ls", "--limit", "1", "--json"))
    assert isinstance(row["cost_usd"], float) and isinstance(row["progress_percent"], float)
    assert "T" in row["started_at"] and row["started_at"].endswith("+00:00")


def test_db_stop_stops_the_embedded_server_and_the_next_command_starts_it(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from oriole_workstation.cli import app
    from oriole_workstation.database import embedded_url

    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    embedded_url()
    assert (tmp_path / "pgdata" / "postmaster.pid").exists()
    stopped = CliRunner().invoke(app, ["db", "stop"])
    assert stopped.exit_code == 0 and stopped.stdout == "stopped the embedded database server\n"
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()
    again = CliRunner().invoke(app, ["db", "stop"])
    assert again.stdout == "the embedded database server was not running\n"


def test_archived_experiments_leave_reports_and_exports_and_come_back_and_delete_removes_every_row(
    cli, store, tmp_path
):
    tag = "archive-me"
    ids = [
        printed_json(cli("run", "--agent", agent, "--maze", "perfect-7", "--comment", tag, "--json"))["experiment_id"]
        for agent in ("oracle", "explorer", "wall-follower")
    ]

    def reported() -> set[str]:
        return {row["model_name"] for row in printed_json(cli("report", "--tag", tag, "--format", "json"))}

    assert reported() == {"oracle", "explorer", "wall-follower"}
    archived = cli("experiments", "archive", str(ids[0]), str(ids[1]))
    assert archived.stdout == f"archived 2 experiment(s): {ids[0]}, {ids[1]}\n"
    assert reported() == {"wall-follower"}
    cli("export", "--format", "jsonl", "-o", str(tmp_path / "out"), "--tag", tag)
    exported = [json.loads(line) for line in (tmp_path / "out" / "experiments.jsonl").read_text().splitlines()]
    assert [row["experiment_id"] for row in exported] == [ids[2]]
    assert cli("experiments", "restore", "--tag", tag).stdout == f"restored 2 experiment(s): {ids[0]}, {ids[1]}\n"
    assert reported() == {"oracle", "explorer", "wall-follower"}

    running = {
        "input": {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "random", "comment": tag},
        "executionArn": "arn:aws:states:us-east-1:123456789012:execution:oriole-experiment:archive-running",
    }
    ids.append(
        experiments.start(StartRequest.model_validate(running), store, lambda names: catalog.defaults()).as_state()[
            "experimentId"
        ]
    )
    refused = cli("experiments", "delete", "--tag", tag, "--yes")
    assert refused.exit_code == 2 and f"experiment(s) {ids[3]} still running" in refused.stderr
    assert (
        store.conn.execute("SELECT count(*) AS n FROM actions WHERE experiment_id = ANY (%s)", (ids,)).fetchone()["n"]
        > 0
    )  # nothing was deleted
    store.finalize(ids[3], "aborted", "stopped by the test")
    unasked = cli("experiments", "delete", "--tag", tag)  # no terminal to ask on: refused, nothing deleted
    assert unasked.exit_code == 2 and "delete 4 experiment(s)" in unasked.stderr and "add --yes" in unasked.stderr
    assert cli("experiments", "delete", "--tag", tag, "--yes").stdout.startswith("deleted 4 experiment(s)")
    left = store.conn.execute(
        "SELECT (SELECT count(*) FROM experiments WHERE id = ANY (%(ids)s)) + "
        "(SELECT count(*) FROM actions WHERE experiment_id = ANY (%(ids)s)) AS n",
        {"ids": ids},
    ).fetchone()["n"]
    assert left == 0
    gone = cli("report", "--tag", tag, "--format", "json")
    assert gone.exit_code == 2 and f"--tag {tag} matches no experiment" in gone.stderr
    assert "No such option: --aws" in cli("experiments", "delete", "1", "--aws").stderr


def test_an_exploratory_run_is_tagged_and_left_out_of_reports_and_exports_until_restored(cli, tmp_path):
    tag = "explore-once"
    counted = printed_json(cli("run", "--agent", "oracle", "--maze", "perfect-7", "--comment", tag, "--json"))
    tried = cli("run", "--agent", "explorer", "--maze", "perfect-7", "--comment", tag, "--exploratory")
    assert tried.exit_code == 0, tried.output
    explored = int(re.search(r"^experiment\s+(\d+)$", tried.stdout, re.M)[1])
    assert (
        f"Exploratory: left out of every report, comparison and export; `oriole experiments restore {explored}` "
        "counts it." in tried.stdout
    )

    def reported() -> set[str]:
        return {row["model_name"] for row in printed_json(cli("report", "--tag", tag, "--format", "json"))}

    assert reported() == {"oracle"}
    cli("export", "--format", "jsonl", "-o", str(tmp_path / "out"), "--tag", tag)
    exported = [json.loads(line) for line in (tmp_path / "out" / "experiments.jsonl").read_text().splitlines()]
    assert [row["experiment_id"] for row in exported] == [counted["experiment_id"]]
    listed = {row["experiment_id"] for row in printed_json(cli("ls", "--json", "--limit", "0"))}
    assert {explored, counted["experiment_id"]} <= listed  # ls lists every experiment, exploratory ones too
    assert cli("experiments", "restore", str(explored)).exit_code == 0
    assert reported() == {"oracle", "explorer"}


@pytest.mark.parametrize(
    "args, message",
    [
        (("experiments", "archive"), "say what to archive: EXPERIMENT ids, --sweep ID or other filters"),
        (("experiments", "delete", "0"), "expects a whole number from 1"),
        (("experiments", "delete", "x1"), "expects a whole number from 1"),
        (("experiments", "restore", "--tag", "no-such-tag-anywhere"), "--tag no-such-tag-anywhere matches no"),
    ],
)
def test_experiments_commands_refuse_what_names_no_experiment_in_one_line(cli, args, message):
    refused = cli(*args)
    assert refused.exit_code == 2 and message in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
