"""Hostile input through the ``oriole`` command (issues 14 and 26): a refused input is one line and no row, stored
and provider text is shown and never obeyed (markup, escape sequences, spreadsheet formulas), ``params set --aws``
refuses what a start would refuse, prompt and sweep files fail cleanly, and no credential reaches a row or a line."""

from __future__ import annotations

import csv
import io
import json
import re

import boto3
import pytest
from moto import mock_aws
from psycopg import sql

from oriole import catalog
from oriole.handlers import agents
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest
from oriole_workstation import display
from oriole_workstation.runner import EXECUTION_PREFIX
from tests.ollama_server import ScriptedOllama, error, tool_calls
from tests.ollama_server import text_reply as ollama_text
from tests.openai_server import ScriptedOpenAI
from tests.openai_server import text_reply as openai_text
from tests.openai_server import tool_calls as openai_calls
from tests.scripted_server import trickle

RAW_CONTROL = ("\x1b", "\x07", "\x9b", "\u202e")


def count_experiments(store) -> int:
    return store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


def one_clean_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    for dump in ("Traceback", "stackTrace", "FailureEventException", "errorType"):
        assert dump not in output
    return lines[0]


# -- class 8: a rejected input is one line and no row -----------------------------------------------------------


@pytest.fixture(scope="module")
def database_url(module_database):
    """A database of this file's own: its tests list, report, export and read every stored text of the database."""
    return module_database


@pytest.mark.parametrize(
    "args, message",
    [
        (("--prompt", "nope"), "UnknownPromptVersion: no prompt at /oriole/prompts/nope: store it with"),
        (
            ("--comment", "a\x00b"),
            "InvalidExecutionInput: invalid execution input: comment: Value error, contains a NUL",
        ),
    ],
)
def test_a_rejected_input_prints_one_line_and_leaves_no_row(cli, store, args, message):
    before = count_experiments(store)
    result = cli("run", "--agent", "random", "--maze", "perfect-7", *args)
    assert result.exit_code == 2
    assert one_clean_line(result.output).startswith(f"error: the execution was rejected: {message}")
    as_json = cli("run", "--agent", "random", "--maze", "perfect-7", "--json", *args)
    assert as_json.exit_code == 2
    data = json.loads(as_json.stdout)
    assert data["status"] == "rejected" and data["failure_reason"].startswith(message)
    assert "stackTrace" not in as_json.output and "FailureEventException" not in as_json.output
    assert count_experiments(store) == before


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("--provider", "ollama", "--model", "m", "--ollama-url", "file:///etc/passwd"),
            "config.endpoint must be an http or https URL",
        ),
        (
            ("--provider", "openai", "--model", "m", "--openai-url", "ftp://gpu-box/v1"),
            "config.baseUrl must be an http or https URL",
        ),
        (("--agent", "random", "--config", "temperature=nan"), "config.temperature must be a finite number"),
        (("--agent", "random", "--config", "requestTimeoutSeconds=1e300"), "must be at most 840"),
        (
            ("--agent", "random", "--max-moves", "0"),
            "'--max-moves': expects a whole number from 1 to 1,000,000; got '0'",
        ),
        (("--agent", "random", "--config", "maxMoves=0"), "config.maxMoves must be at least 1 (from 1 to 1000000)"),
        (("--agent", "random", "--config", "maxMoves=\u0661\u0662"), "must be an integer from 1 to 1000000"),
        (("--agent", "random", "--config", "maxMoves=1_000"), "must be an integer from 1 to 1000000"),
        (("--agent", "random", "--config", "maxMoves=12.0"), "must be an integer from 1 to 1000000"),
        (("--agent", "random", "--config", "seed=true"), "must be an integer from -1 to 2147483647"),
    ],
)
def test_a_bad_setting_on_the_command_line_is_refused_before_anything_starts(cli, store, args, message):
    before = count_experiments(store)
    result = cli("run", "--maze", "perfect-7", *args)
    assert result.exit_code == 2 and message in one_clean_line(result.output)
    assert count_experiments(store) == before


# -- class 7: the terminal and spreadsheets ----------------------------------------------------------------------

MARKUP_MODEL = "[/]evil[bold]x[/bold]"
PROVIDER_ERROR = "bad model \x1b]0;pwned\x07\x1b[2J\x9b1m [/] [bold]x \u202eexe"


def test_markup_and_escape_sequences_in_stored_text_are_shown_never_obeyed(cli, store, database_url):
    with ScriptedOllama(error(400, PROVIDER_ERROR)) as server:
        result = cli(
            "run", "--maze", "perfect-7", "--provider", "ollama", "--model", MARKUP_MODEL, "--ollama-url", server.url
        )
    assert result.exit_code == 1, result.output
    assert MARKUP_MODEL in result.output and "\\x1b]0;pwned\\x07\\x1b[2J\\x9b1m [/] [bold]x \\u202eexe" in result.output
    experiment_id = store.conn.execute("SELECT max(id) AS id FROM experiments").fetchone()["id"]
    zombie = experiments.start(
        StartRequest.model_validate(
            {
                "input": {"mazeId": "perfect-7", "llmProvider": "ollama", "modelName": MARKUP_MODEL},
                "executionArn": EXECUTION_PREFIX + "hostile-markup",
            }
        ),
        store,
        lambda names: catalog.defaults(),
    ).as_state()
    outputs = [result.output]
    for args in (
        ("status", str(experiment_id)),
        ("report", "--model", MARKUP_MODEL, "--wide"),
        ("doctor",),
        ("doctor", "--fix"),
    ):
        shown = cli(*args)
        assert shown.exit_code == 0, shown.output
        outputs.append(shown.output)
    assert MARKUP_MODEL in outputs[1] and "\\x1b]0;pwned" in outputs[1]
    assert "ollama/" + MARKUP_MODEL in outputs[2] and f"experiment {zombie['experimentId']} closed" in outputs[4]
    for output in outputs:
        assert not any(char in output for char in RAW_CONTROL)


def test_a_csv_report_writes_no_formula(cli):
    model = '=HYPERLINK("http://evil.example","click")'
    with ScriptedOllama(tool_calls(("move_east", {}))) as server:
        ran = cli(
            "run",
            "--maze",
            "perfect-7",
            "--provider",
            "ollama",
            "--model",
            model,
            "--ollama-url",
            server.url,
            "--max-moves",
            "1",
        )
    assert ran.exit_code == 0, ran.output
    report = cli("report", "--model", model, "--format", "csv")
    [row] = csv.DictReader(io.StringIO(report.stdout, newline=""))
    assert row["model_name"] == "'" + model and row["runs"] == "1"


# -- class 2: params set --aws refuses what a start would refuse -----------------------------------------------------


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("temperature", "nan", "finite"),
        ("temperature", "inf", "finite"),
        ("requestTimeoutSeconds", "1e300", "at most 840"),
        ("maxDurationMinutes", "-inf", "finite"),
        ("maxMoves", "99999999999", "at most 1000000"),
        ("seed", "2147483648", "at most 2147483647"),
        ("numCtx", "-1", "at least 256"),
        ("endpoint", "file:///etc/passwd", "http or https URL"),
        ("endpoint", "http://ollama:11434/\x1b[2J", "without spaces"),
        ("goalCondition", "teleport", "one of reach"),
    ],
)
def test_params_set_with_aws_refuses_a_value_a_start_would_refuse(cli, monkeypatch, key, value, message):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        result = cli("params", "set", "--aws", "--", key, value)  # "--": a value may start with "-"
        stored = boto3.client("ssm").get_parameters(Names=[catalog.BY_KEY[key].name])["Parameters"]
    assert result.exit_code == 2 and message in one_clean_line(result.output)
    assert stored == []


def test_params_set_with_aws_stores_a_good_endpoint(cli, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        assert cli("params", "set", "endpoint", "https://ollama.example.org", "--aws").exit_code == 0
        value = boto3.client("ssm").get_parameter(Name="/oriole/ollama/endpoint")["Parameter"]["Value"]
    assert value == "https://ollama.example.org"


# -- class 8: prompt files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [
        ("Trouvez la sortie. Café.".encode("latin-1"), "is not UTF-8 text (byte 0xe9 at offset 22)"),
        (b"Find the goal.\x00", "the prompt contains a NUL character"),
        (b"\xff\xfe" + "Find the goal.".encode("utf-16-le"), "is not UTF-8 text (byte 0xff at offset 0)"),
    ],
)
def test_a_prompt_file_that_cannot_be_stored_is_refused_with_one_line(cli, tmp_path, content, message):
    path = tmp_path / "prompt.md"
    path.write_bytes(content)
    result = cli("prompts", "put", "v9", "--file", str(path))
    assert result.exit_code == 2 and message in one_clean_line(result.output)
    assert "v9" not in cli("prompts", "list").output


def test_a_prompt_file_edited_into_another_encoding_is_named_not_a_traceback(cli, tmp_path):
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "latin.md").write_bytes("Trouvez la sortie. Café.".encode("latin-1"))
    result = cli("run", "--agent", "random", "--maze", "perfect-7")
    assert result.exit_code == 2 and "latin.md is not UTF-8 text" in one_clean_line(result.output)
    (tmp_path / "prompts" / "latin.md").unlink()  # the failed start left nothing behind: the next run works
    assert cli("run", "--agent", "oracle", "--maze", "perfect-7").exit_code == 0


# -- class 6: sweeps ------------------------------------------------------------------------------------------------


def test_a_sweep_whose_every_experiment_is_rejected_exits_non_zero(cli, store, tmp_path, monkeypatch):
    """What only StartExperiment knows (here, a deployment's allowed endpoints) rejects each experiment."""
    monkeypatch.setenv("ORIOLE_OLLAMA_ENDPOINTS", '["https://ollama.example.org"]')
    path = tmp_path / "sweep.toml"
    path.write_text('id = "hostile-rejected"\nagents = ["ollama/q1", "ollama/q2"]\nmazes = ["perfect-7"]\n')
    before = count_experiments(store)
    result = cli("sweep", str(path), "--quiet", "--no-server-check")  # StartExperiment refuses, not the check
    assert result.exit_code == 2, result.output
    assert "2 planned: 0 already done, 2 rejected" in result.output
    assert count_experiments(store) == before


@pytest.mark.parametrize("dry_run", [(), ("--dry-run",)])
def test_a_sweep_on_a_prompt_no_experiment_could_take_is_refused_before_anything_starts(cli, store, tmp_path, dry_run):
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "edited.md").write_text("Find the goal.\x00 (edited by hand)")  # passes the file check
    path = tmp_path / "sweep.toml"
    path.write_text(
        'id = "hostile-prompt"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\nprompts = ["edited"]\n'
    )
    before = count_experiments(store)
    result = cli("sweep", str(path), "--quiet", *dry_run)
    assert result.exit_code == 2 and "prompt version edited contains a NUL" in one_clean_line(result.output)
    assert count_experiments(store) == before


@pytest.mark.parametrize(
    "content, message",
    [
        (b'id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7", 101]\n', "comes out twice"),
        (b'id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\ncomment = "caf\xe9"\n', "not UTF-8 text"),
        (b'id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\nprompts = ["v404"]\n', "v404 not found"),
        (b'id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\nconcurrency = 0\n', "concurrency"),
        (b'id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-11@07", "perfect-11@7"]\n', "comes out twice"),
        (
            b'id = "d"\nagents = ["ollama/q"]\nmazes = ["perfect-7"]\ngrid = { temperature = [0.0, -0.0] }\n',
            "comes out twice",
        ),
        (
            b'id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\ncomment = "'
            + b"x" * 900
            + b'"\n'
            + b"".join(b"[[configs]]\nseed = %d\n" % i for i in range(5000)),
            "larger than 65,536",
        ),
        (
            b'id = "d"\nagents = ["baseline/oracle"]\nmazes = [{ family = "sparse", size = 201, samples = 1000 }]\n',
            "more than 2,000,000 tiles",
        ),
    ],
)
def test_a_hostile_sweep_file_is_one_line_and_starts_nothing(cli, store, tmp_path, content, message):
    path = tmp_path / "sweep.toml"
    path.write_bytes(content)
    before = count_experiments(store)
    result = cli("sweep", str(path), "--dry-run")
    assert result.exit_code == 2 and message in one_clean_line(result.output)
    assert count_experiments(store) == before


def test_an_argument_that_is_not_utf8_is_refused_by_the_command_itself(monkeypatch, capsys):
    from oriole_workstation.cli import main

    monkeypatch.setattr("sys.argv", ["oriole", "report", "--model", b"caf\xe9".decode("utf-8", "surrogateescape")])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    assert "argument 3 contains an unpaired surrogate character (U+DCE9)" in one_clean_line(capsys.readouterr().err)


# -- issue 26, class 2: no credential in any row or any printed line --------------------------------------------------

SECRET = "sk-test-SECRET-0123456789"


def every_stored_text(store) -> str:
    """Every text, JSON and array column of every table, as one string: where a leak would have to be."""
    columns = store.conn.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN information_schema.tables t "
        "USING (table_schema, table_name) WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' "
        "AND c.data_type IN ('text', 'jsonb', 'json', 'character varying', 'ARRAY')"
    ).fetchall()
    assert {"failure_reason", "response", "reasoning", "request_messages"} <= {c["column_name"] for c in columns}
    return " ".join(
        str(
            store.conn.execute(
                sql.SQL("SELECT string_agg({}::text, ' ') AS t FROM {}").format(
                    sql.Identifier(c["column_name"]), sql.Identifier(c["table_name"])
                )
            ).fetchone()["t"]
        )
        for c in columns
    )


@pytest.fixture
def secret_keys(monkeypatch):
    """Both providers send SECRET as their API key (read afresh: the agents cache a key per process)."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OLLAMA_API_KEY", SECRET)
    agents.api_key.cache_clear()
    yield
    agents.api_key.cache_clear()


def openai_echoes(other_url: str) -> dict[str, list]:
    """Hostile OpenAI-compatible answers, each quoting the key the request carried."""
    echo = json.dumps(
        {
            "error": {
                "message": f"Incorrect API key provided: Bearer {SECRET}",
                "type": "auth",
                "code": "invalid_api_key",
            }
        }
    ).encode()
    return {
        "401 echo": [(401, echo)],
        "redirect to another host": [(307, echo, {"Location": f"{other_url}/steal?key={SECRET}"})],
        "5xx echo": [(503, f"Authorization: Bearer {SECRET}".encode())] * 9,
        "body not JSON": [(200, f"Authorization: Bearer {SECRET}".encode())],
        "bad status line": [trickle(0, [f"HTTP/1.1 2 Bearer {SECRET}\r\n\r\n".encode()])] * 9,
        "answer echo": [
            openai_calls(("move_east", {"reasoning": SECRET}), content=SECRET, reasoning_content=SECRET),
            openai_text(f"my key is {SECRET}"),
            openai_calls(("move_west", {"reasoning": SECRET})),
        ],
    }


def test_no_key_reaches_a_row_or_a_printed_line_whatever_a_server_echoes(cli, store, secret_keys, tmp_path):
    printed = []
    with ScriptedOpenAI() as elsewhere:
        for name, script in openai_echoes(elsewhere.url).items():
            with ScriptedOpenAI(*script, api_key=SECRET) as server:
                result = cli(
                    "run",
                    "--maze",
                    "perfect-7",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--openai-url",
                    server.base_url,
                    "--config",
                    "requestTimeoutSeconds=1",
                    "--max-moves",
                    "2",
                    "--comment",
                    name,
                )
                assert server.requests and all(
                    r.headers["authorization"] == f"Bearer {SECRET}" for r in server.requests
                )
            assert result.exit_code in (0, 1), (name, result.output)
            printed.append(result.output)
        assert elsewhere.requests == []  # the redirect was not followed: the key went nowhere else
    with ScriptedOllama(
        tool_calls(("move_east", {"reasoning": SECRET}), content=SECRET, thinking=SECRET),
        ollama_text(SECRET),
        error(401, f"key {SECRET} refused"),
    ) as server:
        printed.append(
            cli("run", "--maze", "perfect-7", "--provider", "ollama", "--model", "m", "--ollama-url", server.url).output
        )
    newest = store.conn.execute("SELECT max(id) AS id FROM experiments").fetchone()["id"]
    for args in (
        ("status", str(newest), "--json"),
        ("ls", "--json"),
        ("ls",),
        ("report", "--format", "csv"),
        ("report", "--format", "json"),
        ("doctor", "--json"),
    ):
        printed.append(cli(*args).output)
    assert cli("export", "--format", "jsonl", "-o", str(tmp_path / "export")).exit_code == 0
    printed += [path.read_text() for path in (tmp_path / "export").iterdir()]
    shown = "\n".join(printed)
    assert "[API key]" in shown  # the echoes were there, scrubbed
    assert SECRET not in shown and SECRET not in every_stored_text(store)


@pytest.mark.parametrize(
    "args",
    [
        ("--provider", "openai", "--model", "m", "--openai-url", f"http://lab:{SECRET}@127.0.0.1:8000/v1"),
        ("--provider", "ollama", "--model", "m", "--ollama-url", f"http://{SECRET}@127.0.0.1:11434"),
        ("--provider", "ollama", "--model", "m", "--config", f"endpoint=http://x:{SECRET}@127.0.0.1\\@evil"),
    ],
)
def test_a_url_with_a_password_is_refused_in_one_line_that_never_quotes_it(cli, store, args):
    before = count_experiments(store)
    result = cli("run", "--maze", "perfect-7", *args)
    assert result.exit_code == 2 and SECRET not in one_clean_line(result.output)
    assert count_experiments(store) == before


def test_params_set_refuses_a_url_with_a_password_without_quoting_it(cli, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        result = cli("params", "set", "--aws", "baseUrl", f"https://lab:{SECRET}@gpu.example/v1")
        stored = boto3.client("ssm").get_parameters(Names=[catalog.BY_KEY["baseUrl"].name])["Parameters"]
    assert result.exit_code == 2 and "user name or password" in one_clean_line(result.output)
    assert SECRET not in result.output and stored == []


@pytest.mark.parametrize("key", [f"{SECRET}\n", f"{SECRET}\x1b]0;x\x07", f"{SECRET}\u2028", f"{SECRET}ключ"])
def test_an_api_key_no_header_can_carry_is_refused_at_start_in_one_line(cli, store, monkeypatch, key):
    monkeypatch.setenv("OPENAI_API_KEY", key)
    agents.api_key.cache_clear()
    before = count_experiments(store)
    try:
        result = cli(
            "run",
            "--maze",
            "perfect-7",
            "--provider",
            "openai",
            "--model",
            "m",
            "--openai-url",
            "http://127.0.0.1:1/v1",
        )
    finally:
        agents.api_key.cache_clear()
    line = one_clean_line(result.output)
    assert result.exit_code == 2 and "InvalidApiKey: the OPENAI_API_KEY environment variable holds" in line
    assert SECRET not in result.output and count_experiments(store) == before


# -- issue 26, class 4: a number on the command line is a number, within a range the refusal states -----------------


@pytest.mark.parametrize(
    "args, message",
    [
        (("watch", "\u0661"), "'EXPERIMENT': expects a whole number from 1 to 9,223,372,036,854,775,807"),
        (("watch", "0"), "'EXPERIMENT': expects a whole number from 1 to 9,223,372,036,854,775,807"),
        (("watch", "9" * 30), "'EXPERIMENT': expects a whole number from 1 to 9,223,372,036,854,775,807"),
        (("watch", "1", "--interval", "nan"), "'--interval': expects a number from 0.01 to 3600"),
        (("watch", "1", "--interval", "1e308"), "'--interval': expects a number from 0.01 to 3600"),
        (("watch", "1", "--interval", "\uff12"), "'--interval': expects a number from 0.01 to 3600"),
        (("render", "1.0"), "'EXPERIMENT': expects a whole number from 1"),
        (("render", "--", "-5"), "'EXPERIMENT': expects a whole number from 1"),
        (("status", "99999999999999999999"), "an experiment id is a whole number from 1 to 9,223,372,036,854,775,807"),
        (("ls", "--limit", "1_0"), "'--limit': expects a whole number from 0 to 1,000,000"),
        (
            ("run", "--agent", "random", "--max-moves", "\u0967\u0966"),
            "'--max-moves': expects a whole number from 1 to ",
        ),
        (("sweep", "x.toml", "--concurrency", "true"), "'--concurrency': expects a whole number from 1 to 1,000"),
        (("sweep", "x.toml", "--wait-seconds", "3601"), "'--wait-seconds': expects a whole number from 1 to 3,600"),
        (("sweep", "x.toml", "--provider-concurrency", "baseline=\u0663"), "N from 1 to 1000"),
        (("mazes", "import", "x.txt", "--start", "\u0661,2"), "two whole numbers from 0 to 200"),
    ],
)
def test_a_number_on_the_command_line_is_refused_in_one_line_that_says_the_range(cli, tmp_path, args, message):
    (tmp_path / "x.toml").write_text('id = "n"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\n')
    (tmp_path / "x.txt").write_text("S.G\n")
    args = tuple(str(tmp_path / a) if a in ("x.toml", "x.txt") else a for a in args)
    result = cli(*args)
    assert result.exit_code == 2 and message in one_clean_line(result.output)


# -- issue 26, class 6: every place that shows stored text shows it, never obeys it ---------------------------------

OBEYED = [
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1b[2J\x1b[3J\x1bc",
    "\x9d0;title\x9c",
    "\u202e\u2066\u2067\u2068\u2069\u061c\u200e",
    "\u200b\ufeff\u2028\u2029\xad",
    "\U000e0041\U000e007f",
    "\x07\x08\x7f\r",
]
HOSTILE_TEXT = "mo" + "".join(OBEYED) + "del"
RAW = re.compile(f"(?![\t\n\r])[{display.OBEYED}]")  # CSV ends its rows with CR LF


def test_stored_text_is_shown_and_never_obeyed_in_every_output(cli, store, tmp_path):
    path = moves_on("perfect-7")
    reasoning = "=cmd|' /C calc'!A0 " + HOSTILE_TEXT
    with ScriptedOllama(
        tool_calls(*[(m, {"reasoning": reasoning}) for m in path], content=HOSTILE_TEXT, thinking=HOSTILE_TEXT),
        ollama_text(HOSTILE_TEXT),
    ) as server:
        ran = cli(
            "run",
            "--maze",
            "perfect-7",
            "--provider",
            "ollama",
            "--model",
            "m\u202eevil",
            "--ollama-url",
            server.url,
            "--comment",
            "@SUM(1) " + HOSTILE_TEXT,
        )
    assert ran.exit_code == 2 and "control character U+202E" in ran.output  # a name never holds one
    with ScriptedOllama(
        tool_calls(*[(m, {"reasoning": reasoning}) for m in path], content=HOSTILE_TEXT, thinking=HOSTILE_TEXT),
        ollama_text(HOSTILE_TEXT),
    ) as server:
        ran = cli(
            "run",
            "--maze",
            "perfect-7",
            "--provider",
            "ollama",
            "--model",
            "=HYPERLINK(1)",
            "--ollama-url",
            server.url,
            "--comment",
            "@SUM(1) " + HOSTILE_TEXT,
        )
    assert ran.exit_code == 0, ran.output
    experiment = store.conn.execute("SELECT max(id) AS id FROM experiments").fetchone()["id"]
    outputs = {"run": ran.output}
    for args in (
        ("status", str(experiment)),
        ("status", str(experiment), "--json"),
        ("ls",),
        ("ls", "--json"),
        ("watch", str(experiment)),
        ("report",),
        ("report", "--format", "json"),
        ("report", "--format", "csv"),
        ("report", "--format", "html"),
        ("doctor",),
    ):
        result = cli(*args)
        assert result.exit_code == 0, (args, result.output)
        outputs[" ".join(args)] = result.output
    for output_format in ("csv", "jsonl"):
        assert cli("export", "--format", output_format, "-o", str(tmp_path / output_format)).exit_code == 0
        outputs.update({str(p): p.read_text(encoding="utf-8") for p in (tmp_path / output_format).iterdir()})
    assert cli("render", str(experiment), "--animate", "--dir", str(tmp_path)).exit_code == 0
    outputs.update({str(p): p.read_text(encoding="utf-8") for p in tmp_path.glob("experiment-*.html")})
    assert len(outputs) > 15
    for where, output in outputs.items():
        assert not RAW.findall(output), where

    def exported(table: str) -> list[dict]:
        rows = csv.DictReader(io.StringIO(outputs[str(tmp_path / "csv" / f"{table}.csv")], newline=""))
        return [row for row in rows if row["experiment_id"] == str(experiment)]

    assert exported("actions")[0]["reasoning"].startswith("'=cmd|")  # a formula is text
    [row] = exported("experiments")
    assert row["model_name"] == "'=HYPERLINK(1)" and row["comment"].startswith("'@")
    calls = [json.loads(line) for line in outputs[str(tmp_path / "jsonl" / "model_calls.jsonl")].splitlines()]
    assert any(json.loads(call["response"])["text"] == HOSTILE_TEXT for call in calls)  # the data itself, whole


def moves_on(maze: str) -> list[str]:
    from tests.integration.test_fault_table import moves

    return moves(maze)


def test_a_maze_name_that_looks_like_an_id_or_is_taken_is_refused_by_name(cli, tmp_path):
    grid = tmp_path / "corridor.txt"
    grid.write_text("S.G\n")
    other = tmp_path / "other.txt"
    other.write_text("S..G\n")
    numeric = cli("mazes", "import", str(grid), "--name", "12345")
    assert numeric.exit_code == 2 and "not all digits" in one_clean_line(numeric.output)
    assert cli("mazes", "import", str(grid), "--name", "corridor-26").exit_code == 0
    taken = cli("mazes", "import", str(other), "--name", "corridor-26")
    assert taken.exit_code == 2 and "the name corridor-26 is taken by another maze" in one_clean_line(taken.output)
    shipped = cli("mazes", "import", str(other), "--name", "perfect-7")
    assert shipped.exit_code == 2 and "the name perfect-7 is taken" in one_clean_line(shipped.output)
    control = cli("mazes", "import", str(other), "--name", "a\x1b[2Jb")
    assert control.exit_code == 2 and "\x1b" not in control.output


def test_a_prompt_version_that_looks_like_an_id_or_is_taken_is_refused_by_name(cli, tmp_path):
    prompt = tmp_path / "p.md"
    prompt.write_text("Find the goal, tersely.")
    numeric = cli("prompts", "put", "2024", "--file", str(prompt))
    assert numeric.exit_code == 2 and "not all digits" in one_clean_line(numeric.output)
    shipped = cli("prompts", "put", "v1", "--file", str(prompt))
    assert shipped.exit_code == 2 and "prompt version v1 is taken" in one_clean_line(shipped.output)
    assert cli("prompts", "put", "terse-26", "--file", str(prompt)).exit_code == 0
    again = cli("prompts", "put", "terse-26", "--file", str(prompt))
    assert again.exit_code == 0 and "is already in the local prompt folder" in again.output
    prompt.write_text("Find the goal, verbosely.")
    changed = cli("prompts", "put", "terse-26", "--file", str(prompt))
    assert changed.exit_code == 2 and "is taken (stored with another text" in one_clean_line(changed.output)
    control = cli("prompts", "put", "v\u202e2", "--file", str(prompt))
    assert control.exit_code == 2 and "\u202e" not in control.output


# -- issue 26, class 7: no traceback anywhere --------------------------------------------------------------------------


@pytest.fixture
def odd_paths(tmp_path):
    """A FIFO (reading one would wait for a writer forever), a folder, and files of hostile JSON."""
    import os

    os.mkfifo(tmp_path / "pipe.toml")
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "deep.json").write_text(
        '{"id": "d", "agents": ["baseline/oracle"], "mazes": ' + "[" * 100 + "]" * 100 + "}"
    )
    (tmp_path / "deep-maze.json").write_text('{"grid": ' + "[" * 200_000 + "]" * 200_000 + "}")
    (tmp_path / "long-number.json").write_text('{"grid": [[1' + "0" * 5000 + "]]}")
    (tmp_path / "sweep.toml").write_text('id = "d"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\n')
    return tmp_path


@pytest.mark.parametrize(
    "args, message",
    [
        (("sweep", "/dev/zero"), "/dev/zero is a device or socket, not a regular file: nothing was read"),
        (("sweep", "{tmp}/pipe.toml"), "pipe.toml is a pipe, not a regular file"),
        (("sweep", "{tmp}/folder.json"), "folder.json is a folder, not a regular file"),
        (("sweep", "{tmp}/deep.json", "--dry-run"), "is JSON nested deeper than 64 levels"),
        (("prompts", "put", "v9", "--file", "/dev/zero"), "is a device or socket, not a regular file"),
        (("prompts", "put", "v9", "--file", "{tmp}/pipe.toml"), "is a pipe, not a regular file"),
        (("mazes", "import", "/dev/urandom"), "is a device or socket, not a regular file"),
        (("mazes", "import", "{tmp}/deep-maze.json"), "is JSON nested deeper than 64 levels"),
        (("mazes", "import", "{tmp}/long-number.json"), "is not valid JSON: a number of 5,001 digits (at most 100)"),
        (("report", "-o", "{tmp}/folder.json"), "folder.json: Is a directory"),
        (("report", "-o", "/dev/null/report.txt"), "cannot write /dev/null/report.txt: Not a directory"),
        (("report", "--format", "html", "-o", "/proc/version"), "cannot write /proc/version: "),
        (("export", "--format", "csv", "-o", "{tmp}/sweep.toml"), "is a file, not a folder"),
        (("report", "--figures", "{tmp}/sweep.toml"), "sweep.toml (--figures) is a file, not a folder"),
        (("render", "1", "-o", "/dev/null/x.png"), ""),
    ],
)
def test_a_file_that_cannot_be_read_or_written_is_one_line(cli, odd_paths, args, message):
    result = cli(*(arg.format(tmp=odd_paths) for arg in args))
    assert result.exit_code == 2 and message in one_clean_line(result.output)


@pytest.mark.parametrize(
    "url, message",
    [
        ("postgresql://oriole:SECRETPW@127.0.0.1:{closed}/oriole", "cannot use the database at 127.0.0.1:"),
        ("postgresql://oriole:SECRETPW@127.0.0.1:{http}/oriole?connect_timeout=1", "cannot use the database at"),
        ("postgresql://oriole:SECRETPW@127.0.0.1:{silent}/oriole?connect_timeout=1", "cannot use the database at"),
        ("http://oriole:SECRETPW@example.org/x y", "DATABASE_URL is not a PostgreSQL connection URL"),
        ("host=127.0.0.1 password=SECRETPW port=x", "cannot use the database"),
    ],
)
def test_a_database_url_that_leads_nowhere_is_one_line_without_its_password(cli, monkeypatch, url, message):
    import socket

    with socket.socket() as closed, socket.socket() as silent, ScriptedOllama() as http:
        closed.bind(("127.0.0.1", 0))
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts, never answers
        url = url.format(
            closed=closed.getsockname()[1], silent=silent.getsockname()[1], http=http.url.rsplit(":", 1)[1]
        )
        monkeypatch.setenv("DATABASE_URL", url)
        results = [cli(*args) for args in (("ls",), ("db", "migrate"))]  # reading, and migrating
    for result in results:
        assert result.exit_code == 2 and message in one_clean_line(result.output)
        assert "SECRETPW" not in result.output
