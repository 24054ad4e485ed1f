"""What the functions send through RDS Proxy never pins a session to one server connection (AWS's "Avoiding
pinning an RDS Proxy"): no SET or set_config, no prepared statement (PREPARE, EXECUTE, DEALLOCATE, or a named
statement of the extended protocol), no DISCARD, LISTEN, LOAD or DECLARE, no temporary table, no session-level
advisory lock, no sequence function called by name, and no statement text over 16 KB.

Recorded, not assumed: libpq's own trace of every protocol message the handlers' connections send (opened by
``db.connect`` with the settings it uses behind the proxy) while experiments of each kind and a sweep run to
their end through the local state machine. The migrations (the owner's one session per deploy: an advisory
lock serialises concurrent runners, ``nextval`` loads the maze set) and the workstation (direct connections,
never through the proxy) are the only senders of any of these."""

from __future__ import annotations

import re
import uuid

import psycopg
import pytest
from psycopg import pq

from oriole.environment import DATABASE_HOST
from oriole.store import db
from oriole_workstation import runner
from oriole_workstation.results import Results
from tests.integration.conftest import Local, baseline
from tests.integration.test_sweep_local import run_sweep
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls

FUNCTIONS = "oriole-functions"  # the application_name that marks the handlers' connections in this test
MAX_STATEMENT_BYTES = 16 * 1024
START = r"(?:\A|;)\s*"  # where a statement begins: a SET inside an UPDATE is no session setting
PINNING = {
    "SET": START + r"SET\b",
    "set_config": r"\bset_config\s*\(",
    "prepared statement": START + r"(PREPARE|EXECUTE|DEALLOCATE)\b",
    "DISCARD": START + r"DISCARD\b",
    "LISTEN": START + r"LISTEN\b",
    "LOAD": START + r"LOAD\b",
    "cursor": START + r"DECLARE\b",
    "temporary object": r"\bCREATE\s+(GLOBAL\s+|LOCAL\s+)?TEMP(ORARY)?\b",
    "session advisory lock": r"\bpg_(try_)?advisory_lock(_shared)?\s*\(",
    "sequence function": r"\b(nextval|setval|currval|lastval)\s*\(",
}


def sent_statements(trace: str) -> list[tuple[str, str]]:
    """(statement name, text) of every Parse and simple Query the client sent, from a libpq trace (one message
    per line, a text's own line breaks aside)."""
    sent = []
    for message in re.split(r"\n(?=[FB]\t\d+\t)", trace):
        if parsed := re.match(r'F\t\d+\tParse\t "(?P<name>[^"]*)" "(?P<text>.*)" \d+( NNNN)*\s*$', message, re.S):
            sent.append((parsed["name"], parsed["text"]))
        elif query := re.match(r'F\t\d+\tQuery\t "(?P<text>.*)"\s*$', message, re.S):
            sent.append(("", query["text"]))
    return sent


def pinning(name: str, text: str) -> list[str]:
    """Why RDS Proxy would pin the session that sends this statement (nothing: an empty list)."""
    reasons = [reason for reason, pattern in PINNING.items() if re.search(pattern, text, re.I)]
    if name:
        reasons.append(f"named prepared statement {name}")
    if len(text.encode()) > MAX_STATEMENT_BYTES:
        reasons.append(f"{len(text.encode())} bytes of statement text")
    return reasons


def test_the_trace_reader_sees_what_would_pin(database_url, tmp_path):
    """The check itself: a connection that prepares statements and sets a parameter is caught."""
    path = tmp_path / "trace.txt"
    with path.open("w") as trace, psycopg.connect(database_url, autocommit=True, prepare_threshold=0) as conn:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        conn.execute("SET statement_timeout = '5s'")
        conn.execute("SELECT %s::text AS x", ("a\nb",))
        conn.execute("SELECT nextval('mazes_id_seq')")
    found = [reason for name, text in sent_statements(path.read_text()) for reason in pinning(name, text)]
    assert "SET" in found and "sequence function" in found
    assert any(reason.startswith("named prepared statement _pg3_") for reason in found)


@pytest.fixture
def traced_local(database_url, monkeypatch, tmp_path):
    """The local state machine, its handlers connecting as on AWS (behind the proxy: ``ORIOLE_DATABASE_HOST``
    set) with every connection they open traced by libpq; the runner's own connections are not traced."""
    traces = []
    connect = runner._connect  # db.connect itself: the runner wraps it to count statements

    def traced_connect(url: str | None = None) -> psycopg.Connection:
        conn = connect(url)
        if FUNCTIONS in (url or db.database_url()):
            path = tmp_path / f"connection-{len(traces)}.trace"
            trace = path.open("w")
            conn.pgconn.trace(trace.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
            traces.append((conn, trace, path))
        return conn

    monkeypatch.setattr(runner, "_connect", traced_connect)
    monkeypatch.setenv(DATABASE_HOST, "oriole-proxy.proxy-test.us-east-1.rds.amazonaws.com")
    functions_url = psycopg.conninfo.make_conninfo(database_url, application_name=FUNCTIONS)
    conn = db.connect(database_url)
    with runner.LocalAws(database_url, functions_url=functions_url) as aws:
        yield Local(aws, Results(conn)), traces
    conn.close()


def test_the_functions_send_nothing_that_pins_a_proxy_session(traced_local):
    local, traces = traced_local
    assert local.run(baseline("explorer", "perfect-7")).as_json()["status"] == "succeeded"
    script = [
        tool_calls(("move_east", {"reasoning": "corridor"}), ("move_south", {})),
        text_reply("thinking"),
        tool_calls(("move_north", {})),
    ]
    with ScriptedOllama(*script) as server:  # the moves allowed run out: model calls and turns are written
        local.run(
            {
                "mazeId": "perfect-7",
                "llmProvider": "ollama",
                "modelName": "qwen2.5:7b",
                "config": {"endpoint": server.url, "maxMoves": 3},
            }
        )
    failed = local.run(
        {
            "mazeId": "perfect-7",
            "llmProvider": "ollama",
            "modelName": "qwen2.5:7b",
            "config": {"endpoint": "http://127.0.0.1:9", "requestTimeoutSeconds": 1},
        }
    )
    assert failed.as_json()["status"] == "failed"
    execution, summary = run_sweep(
        local,
        {
            "id": f"pinning-{uuid.uuid4().hex[:8]}",
            "agents": ["baseline/oracle"],
            "mazes": ["perfect-7", "perfect-9"],
            "repetitions": 1,
        },
    )
    assert execution["status"] == "SUCCEEDED" and summary["succeeded"] == 2
    for conn, trace, _ in traces:
        if not conn.closed:
            conn.pgconn.untrace()  # flushes what libpq still buffers
        trace.close()

    texts = " ".join(text for _, _, path in traces for _, text in sent_statements(path.read_text()))
    for work in (
        "INSERT INTO experiments",
        "INSERT INTO model_calls",
        "UPDATE experiments SET status",
        "WHERE sweep_id = ",
    ):  # starts, turns with model calls, ends, the sweep's summary: all traced
        assert work in texts, work
    statements = [statement for _, _, path in traces for statement in sent_statements(path.read_text())]
    pinned = {text[:120]: pinning(name, text) for name, text in statements if pinning(name, text)}
    assert not pinned, pinned
