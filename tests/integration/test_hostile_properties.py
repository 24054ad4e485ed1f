"""Generated hostile values (Hypothesis) at every boundary of issues 14 and 26: the execution input through
``experiments.start`` on a real database, the config parser, the sweep file loader, the provider response
parsers, a parsed model answer through a real turn commit, and every command of the ``oriole`` CLI. Each must
end in a named ``OrioleError`` or a clean result, never another exception, and a refused input never leaves a
row; a command refuses in one line on stderr with exit status 2, never a traceback.

Example counts are modest so the suite stays fast; ``HYPOTHESIS_PROFILE=thorough`` runs ten times as many.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import uuid
from pathlib import Path

import pytest
import typer.main
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from oriole import catalog
from oriole.catalog import BY_KEY, CATALOG
from oriole.config import parse_assignment, parse_pricing, resolve
from oriole.core import sweep_plan
from oriole.core.turn_loop import ModelResponse
from oriole.errors import InvalidModelResponse, OrioleError
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest, TurnRequest
from oriole.provider_registry import NAMES
from oriole.providers import bedrock, ollama, openai
from oriole.providers.wire import MAX_LATENCY_MS, MAX_TOKENS_PER_CALL
from oriole.text import unstorable
from oriole_workstation import sweep_runs

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ARN_PREFIX = "arn:aws:states:us-east-1:123456789012:execution:hypothesis:"  # not a local execution: doctor skips
SPECIALS = [
    "\x00",
    "\ud800",
    "\udfff",
    "\x1b[2J",
    "\x1b]0;t\x07",
    "[/]",
    "[bold]",
    "\u202e",
    "=1+1",
    "-",
    "@",
    "file:///etc/passwd",
    "ftp://h/",
    "http://",
    "https://h:99999",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "9" * 5000,
    "perfect-7",
    "101",
    "v1",
    "../v1",
    "",
    " ",
    "\\",
    '"',
    "'",
    "{",
    "[" * 50,
]
TEXT = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=30),
    st.sampled_from(SPECIALS),
    st.sampled_from(SPECIALS).map(lambda s: s * 300),
)
NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(),
    st.sampled_from([10**400, -(10**400), 2**31, 2**63, -1, 0, 1e308, math.nan, math.inf]),
)
JSON = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def count(store) -> int:
    return store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


# -- the execution input, through StartExperiment on a real database -----------------------------------------------

CONFIG = st.dictionaries(st.one_of(st.sampled_from(sorted(BY_KEY)), TEXT), st.one_of(NUMBERS, TEXT, JSON), max_size=4)
FIELDS = {
    "mazeId": st.one_of(st.sampled_from(["perfect-7", 101, 7, "sparse-60"]), JSON),
    "llmProvider": st.one_of(st.sampled_from(NAMES), JSON),
    "modelName": st.one_of(st.sampled_from(["random", "oracle", "qwen2.5:7b"]), TEXT, JSON),
    "promptVersion": st.one_of(st.just("v1"), TEXT, JSON),
    "agentId": st.one_of(st.none(), TEXT, JSON),
    "comment": st.one_of(st.none(), TEXT, JSON),
    "config": st.one_of(CONFIG, JSON),
    "experimentId": st.one_of(NUMBERS, JSON),
    "unknownField": JSON,
}
EXECUTION_INPUTS = st.one_of(
    JSON,
    st.fixed_dictionaries({}, optional=FIELDS),
    st.fixed_dictionaries(
        {"mazeId": st.just("perfect-7"), "llmProvider": st.just("ollama"), "modelName": TEXT},
        optional={"config": CONFIG, "comment": TEXT},
    ),
)


@given(raw=EXECUTION_INPUTS)
def test_an_execution_input_is_refused_by_name_with_no_row_or_started_cleanly(store, raw):
    before = count(store)
    start = {"input": raw, "executionArn": ARN_PREFIX + uuid.uuid4().hex}
    try:
        state = experiments.start(
            StartRequest.model_validate(start), store, lambda names: catalog.defaults()
        ).as_state()
    except OrioleError as error:
        event(f"refused: {type(error).__name__}")
        assert count(store) == before
        return
    event("started")
    assert count(store) == before + 1 and isinstance(state["experimentId"], int)
    store.finalize(state["experimentId"], "aborted", "hypothesis: started cleanly")


# -- the config parser --------------------------------------------------------------------------------------------

STORED = st.dictionaries(
    st.one_of(st.sampled_from([p.name for p in CATALOG]), TEXT), st.one_of(TEXT, NUMBERS.map(str)), max_size=5
)


def assert_usable(param: catalog.Parameter, value: object) -> None:
    """A value has its parameter's type, its bounds and storable text."""
    assert type(value) is param.type
    if param.type in (int, float):
        assert math.isfinite(value) and param.minimum <= value <= param.maximum
    elif param.type is not bool:
        assert unstorable(value) is None and (value in param.choices or len(value) <= param.max_length)


@given(stored=STORED, overrides=CONFIG)
def test_the_config_parser_gives_a_usable_snapshot_or_a_named_error(stored, overrides):
    try:
        snapshot = resolve(stored, overrides)
    except OrioleError:
        return
    for param in CATALOG:
        if not param.overridable:
            continue
        if catalog.applies(param, snapshot):  # a key that plays a part is held, usable; one that plays none is not
            assert_usable(param, snapshot[param.key])
        else:
            assert param.key not in snapshot, param.key


@given(
    text=st.one_of(
        TEXT,
        st.tuples(st.sampled_from(sorted(BY_KEY)), st.one_of(TEXT, NUMBERS.map(str))).map(
            lambda kv: f"{kv[0]}={kv[1]}"
        ),
    )
)
def test_a_cli_assignment_is_checked_or_refused_by_name(text):
    try:
        key, value = parse_assignment(text)
    except OrioleError:
        return
    assert_usable(BY_KEY[key], value)


@given(
    text=st.one_of(
        TEXT,
        JSON.map(lambda v: json.dumps(v, default=str)),
        st.fixed_dictionaries({"inputPerMTok": NUMBERS, "outputPerMTok": NUMBERS}).map(json.dumps),
    )
)
def test_a_price_list_is_bounded_or_refused_by_name(text):
    try:
        prices = parse_pricing("/oriole/pricing/m", text)
    except OrioleError:
        return
    assert prices is not None and all(0 <= p <= catalog.MAX_PRICE_PER_MTOK for p in prices.values())


# -- the sweep file loader ----------------------------------------------------------------------------------------


def toml_value(value: object) -> str:
    """A TOML rendering good enough to reach the loader's checks (and sometimes its parser's errors)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value is None:
        return '""'
    return json.dumps(value) if isinstance(value, str) else repr(value)


SWEEP_FIELDS = {
    "agents": st.one_of(
        st.lists(
            st.sampled_from(["baseline/oracle", "baseline/explorer", "ollama/q", "bedrock/m"]), min_size=1, max_size=3
        ),
        st.lists(TEXT, max_size=3),
        JSON,
    ),
    "mazes": st.one_of(
        st.lists(st.sampled_from(["perfect-7", 101, 7, "sparse-60", "nowhere"]), min_size=1, max_size=3), JSON
    ),
    "prompts": st.one_of(st.lists(st.sampled_from(["v1", "v2"]), min_size=1, max_size=2), JSON),
    "repetitions": NUMBERS,
    "concurrency": NUMBERS,
    "spend_limit_usd": NUMBERS,
    "comment": TEXT,
    "configs": st.one_of(st.lists(CONFIG, min_size=1, max_size=3), JSON),
    "grid": st.one_of(
        st.dictionaries(
            st.sampled_from(["temperature", "maxMoves", "visionRange"]), st.lists(NUMBERS, max_size=30), max_size=3
        ),
        JSON,
    ),
    "provider_concurrency": st.one_of(st.dictionaries(st.sampled_from(NAMES), NUMBERS, max_size=3), JSON),
}
SWEEPS = st.fixed_dictionaries(
    {"id": st.one_of(st.just("hypothesis"), TEXT), "agents": SWEEP_FIELDS["agents"], "mazes": SWEEP_FIELDS["mazes"]},
    optional={k: v for k, v in SWEEP_FIELDS.items() if k not in ("agents", "mazes")},
)
SWEEP_FILES = st.one_of(
    st.tuples(st.just(".json"), SWEEPS.map(lambda d: json.dumps(d).encode())),
    st.tuples(
        st.just(".toml"),
        SWEEPS.map(
            lambda d: "\n".join(f"{k} = {toml_value(v)}" for k, v in d.items()).encode("utf-8", "surrogatepass")
        ),
    ),
    st.tuples(st.sampled_from([".toml", ".json"]), st.binary(max_size=200)),
)


@given(file=SWEEP_FILES)
def test_a_sweep_file_plans_unique_cells_within_the_bound_or_is_refused_by_name(file):
    suffix, content = file
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"sweep{suffix}"
        path.write_bytes(content)
        try:
            spec = sweep_runs.load(path)
            planned = sweep_plan.plan(spec)
            sweep_plan.check_prompts(spec, ["v1"])
            caps = sweep_plan.caps(spec, NAMES)
            sweep_runs.run_input(spec, concurrency=None, provider_concurrency={}, retry_failed=False, wait_seconds=1)
        except OrioleError:
            return
    assert len(planned) <= sweep_plan.MAX_EXPERIMENTS
    assert all(1 <= cap <= sweep_plan.MAX_CONCURRENCY for cap in caps.values())
    assert len({(p.cell.key, p.repetition) for p in planned}) == len(planned)


# -- the provider response parsers ------------------------------------------------------------------------------

COUNTS = st.one_of(st.integers(min_value=0, max_value=10**6), NUMBERS, JSON)
OLLAMA_CALL = st.fixed_dictionaries(
    {
        "function": st.fixed_dictionaries(
            {},
            optional={"name": st.one_of(st.sampled_from(["move_east", "recall_all"]), TEXT, JSON), "arguments": JSON},
        )
    }
)
OLLAMA_BODIES = st.one_of(
    st.binary(max_size=300),
    JSON.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {
            "message": st.one_of(
                JSON,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "content": st.one_of(TEXT, JSON),
                        "thinking": st.one_of(TEXT, JSON),
                        "tool_calls": st.one_of(st.lists(st.one_of(OLLAMA_CALL, JSON), max_size=4), JSON),
                    },
                ),
            )
        },
        optional={
            "prompt_eval_count": COUNTS,
            "eval_count": COUNTS,
            "done_reason": st.one_of(TEXT, JSON),
            "total_duration": COUNTS,
            "eval_duration": COUNTS,
        },
    ).map(lambda v: json.dumps(v).encode()),
)
OPENAI_CALL = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(TEXT, JSON),
        "type": st.one_of(st.just("function"), JSON),
        "function": st.one_of(
            JSON,
            st.fixed_dictionaries({}, optional={"name": st.one_of(TEXT, JSON), "arguments": st.one_of(TEXT, JSON)}),
        ),
    },
)
OPENAI_MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(TEXT, JSON),
        "refusal": st.one_of(TEXT, JSON),
        "reasoning_content": st.one_of(TEXT, JSON),
        "tool_calls": st.one_of(st.lists(st.one_of(OPENAI_CALL, JSON), max_size=4), JSON),
    },
)
OPENAI_BODIES = st.one_of(
    st.binary(max_size=300),
    JSON.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {
            "choices": st.one_of(
                JSON,
                st.lists(
                    st.one_of(
                        JSON,
                        st.fixed_dictionaries(
                            {"message": st.one_of(JSON, OPENAI_MESSAGE)},
                            optional={"finish_reason": st.one_of(TEXT, JSON)},
                        ),
                    ),
                    max_size=2,
                ),
            )
        },
        optional={
            "usage": st.one_of(
                JSON, st.fixed_dictionaries({}, optional={"prompt_tokens": COUNTS, "completion_tokens": COUNTS})
            )
        },
    ).map(lambda v: json.dumps(v).encode()),
)
BEDROCK_BLOCK = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {},
        optional={
            "text": st.one_of(TEXT, JSON),
            "toolUse": st.one_of(
                JSON,
                st.fixed_dictionaries(
                    {}, optional={"name": st.one_of(TEXT, JSON), "input": JSON, "toolUseId": st.one_of(TEXT, JSON)}
                ),
            ),
            "reasoningContent": st.one_of(
                JSON,
                st.fixed_dictionaries(
                    {"reasoningText": st.one_of(JSON, st.fixed_dictionaries({"text": st.one_of(TEXT, JSON)}))}
                ),
            ),
        },
    ),
)
BEDROCK_ANSWERS = st.one_of(
    st.dictionaries(TEXT, JSON, max_size=4),
    st.fixed_dictionaries(
        {
            "output": st.one_of(
                JSON,
                st.fixed_dictionaries(
                    {
                        "message": st.one_of(
                            JSON,
                            st.fixed_dictionaries({"content": st.one_of(st.lists(BEDROCK_BLOCK, max_size=4), JSON)}),
                        )
                    }
                ),
            )
        },
        optional={
            "usage": st.one_of(
                JSON, st.fixed_dictionaries({}, optional={"inputTokens": COUNTS, "outputTokens": COUNTS})
            ),
            "metrics": st.one_of(JSON, st.fixed_dictionaries({}, optional={"latencyMs": COUNTS})),
            "stopReason": st.one_of(TEXT, JSON),
        },
    ),
)


def assert_well_formed(response: ModelResponse) -> None:
    usage = response.usage
    for tokens in (usage.input_tokens, usage.output_tokens):
        assert type(tokens) is int and 0 <= tokens <= MAX_TOKENS_PER_CALL
    assert type(usage.latency_ms) is int and 0 <= usage.latency_ms <= MAX_LATENCY_MS
    assert all(isinstance(call.name, str) for call in response.tool_calls)
    assert all(isinstance(v, str) or v is None for v in (response.text, response.thinking, response.stop_reason))
    assert all(type(v) is int and v >= 0 for v in response.durations.values())


@given(raw=OLLAMA_BODIES)
def test_an_ollama_body_parses_to_a_well_formed_response_or_an_invalid_response(raw):
    try:
        response = ollama.parse_response(raw, 12)
    except InvalidModelResponse:
        return
    assert_well_formed(response)


@given(raw=OPENAI_BODIES)
def test_a_chat_completions_body_parses_to_a_well_formed_response_or_an_invalid_response(raw):
    try:
        response = openai.parse_response(raw, 12)
    except InvalidModelResponse:
        return
    assert_well_formed(response)
    assert all(isinstance(call.call_id, str) and call.call_id for call in response.tool_calls)


@given(raw=BEDROCK_ANSWERS)
def test_a_converse_answer_parses_to_a_well_formed_response_or_an_invalid_response(raw):
    try:
        response = bedrock.parse_response(raw)
    except InvalidModelResponse:
        return
    assert_well_formed(response)


# -- a parsed answer, through a real turn commit ----------------------------------------------------------------


class Scripted:
    """An agent answering once with a given response (then with no tool call)."""

    context_budget = None

    def __init__(self, response: ModelResponse):
        self.responses = [response]

    @property
    def settings(self) -> dict:
        return {"model": "hypothesis"}

    def respond(self, request) -> ModelResponse:
        return self.responses.pop() if self.responses else ModelResponse()


@pytest.fixture(scope="module")
def experiment_inputs():
    return {"mazeId": "perfect-7", "llmProvider": "ollama", "modelName": "hypothesis"}


@given(raw=OLLAMA_BODIES)
def test_whatever_a_model_says_its_turn_is_stored_or_refused_by_name(store, experiment_inputs, raw):
    try:
        response = ollama.parse_response(raw, 12)
    except InvalidModelResponse:
        event("refused")
        return
    event(f"stored, {min(len(response.tool_calls), 3)}+ tool calls")
    start = {"input": experiment_inputs, "executionArn": ARN_PREFIX + uuid.uuid4().hex}
    experiment_id = experiments.start(
        StartRequest.model_validate(start), store, lambda names: catalog.defaults()
    ).as_state()["experimentId"]
    try:
        result = experiments.play_turn(
            TurnRequest.model_validate({"experimentId": experiment_id, "turnNumber": 1}),
            store,
            lambda setup: Scripted(response),
        )
        assert result.actions == len(response.tool_calls[:8]) or result.end_reason == "circuit_breaker"
        stored = store.conn.execute("SELECT turn_count FROM experiments WHERE id = %s", (experiment_id,)).fetchone()
        assert stored["turn_count"] == 1
    finally:
        store.finalize(experiment_id, "aborted", "hypothesis: turn stored")


# -- every command of the CLI, with hostile arguments ----------------------------------------------------------------


def cli_commands() -> list[tuple[tuple[str, ...], object]]:
    """Every command of the ``oriole`` app, by its words (``("sweep", "status")``), read from the typer app itself:
    a command added later is driven too."""
    from oriole_workstation.cli import app

    found, groups = [], [((), typer.main.get_command(app))]
    while groups:
        words, group = groups.pop()
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                groups.append(((*words, name), command))
            else:
                found.append(((*words, name), command))
    return sorted(found, key=lambda item: item[0])


# ``db psql`` hands its arguments to psql (it replaces the process with it): psql's errors are psql's.
# ``experiments archive|restore|delete`` change the rows of the database the other tests share (an id such as 1
# names their experiments): driven with hostile ids in test_cli.py on experiments of their own.
NOT_DRIVEN = {("db", "psql"), ("experiments", "archive"), ("experiments", "restore"), ("experiments", "delete")}
COMMANDS = [(words, command) for words, command in cli_commands() if words not in NOT_DRIVEN]
ARGUMENTS = st.one_of(
    st.sampled_from(SPECIALS),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20),
    st.sampled_from(
        [
            "/dev/zero",
            "/",
            "/nonexistent/dir/file.toml",
            "FIFO",
            "FOLDER",
            "1",
            "0",
            "-1",
            "9" * 30,
            "1e999",
            "\u0661\u0662",
            "\uff11",
            "x.png",
            "x.html",
            "--",
            "2024-13-45",
            "1.5",
            "true",
            "a" * 5000,
        ]
    ),
)


@st.composite
def invocations(draw) -> list[str]:
    words, command = draw(st.sampled_from(COMMANDS))
    args = list(words)
    for param in command.params:
        if getattr(param, "is_flag", False):
            if draw(st.booleans()):
                args.append(param.opts[0])
        elif param.param_type_name == "option":
            if draw(st.booleans()):
                args += [param.opts[0], draw(ARGUMENTS)]
        elif param.required or draw(st.booleans()):
            args.append(draw(ARGUMENTS))
    junk = draw(st.integers(0, 9))  # now and then a word no command takes
    return args + (["--no-such-option"] if junk == 0 else ["extra-argument"] if junk == 1 else [])


@pytest.fixture
def command_line(database_url, tmp_path, monkeypatch):
    """The environment a researcher's hostile command line meets: the test database, a private home and working
    folder (a FIFO and a folder in it), AWS pointed at a closed port (no credentials leave, nothing waits), and a
    Ctrl-C as soon as ``oriole view`` serves (it serves until one)."""
    from werkzeug.serving import BaseWSGIServer

    def interrupted(server: BaseWSGIServer, *args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(BaseWSGIServer, "serve_forever", interrupted)
    os.mkfifo(tmp_path / "FIFO")
    (tmp_path / "FOLDER").mkdir()
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "DATABASE_URL": database_url,
        "ORIOLE_HOME": str(tmp_path / "home"),
        "COLUMNS": "250",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_MAX_ATTEMPTS": "1",
        "AWS_RETRY_MODE": "standard",
    }.items():
        monkeypatch.setenv(name, value)


def test_every_command_lists_its_parameters():
    assert {("run",), ("sweep", "run"), ("sweep", "status"), ("mazes", "import"), ("export",)} <= {
        words for words, _ in COMMANDS
    }


@given(args=invocations())
def test_every_command_refuses_hostile_arguments_in_one_line_with_exit_2(command_line, capsys, monkeypatch, args):
    from oriole_workstation.cli import main

    event(args[0] if args[0] not in ("mazes", "sweep", "prompts", "params", "db") else " ".join(args[:2]))
    monkeypatch.setattr("sys.argv", ["oriole", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    out, err = capsys.readouterr()
    code = exited.value.code or 0
    event(f"exit {code}")
    # a usage error printed where the output goes starts its line; stored text a listing shows ("RuntimeError: ...")
    # is data and does not
    assert "Traceback" not in out + err and not re.search(r"^Error:", out, re.MULTILINE), (args, err)
    assert code in (0, 2), (args, code, err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 or (not lines and "Usage" in out), (args, err)
