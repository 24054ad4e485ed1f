"""Every call a server answered counts, whether or not its turn committed (issue 30 item 6, issue 37): a turn whose
later call stalls or fails after the server answered earlier ones keeps those calls' tokens and cost, in the
experiment's totals, in the spend limit's sum and apart as "spent on failed attempts". Each test holds the stored
totals against the server's own ledger (``ScriptedServer.billed``: the tokens its complete answers reported), call
for call, through the local state machine, which retries the turn as it would on AWS. The spend limit's sum is
checked in ``test_sweep_study.py``."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
from decimal import Decimal

import pytest

from tests import openai_server
from tests.integration.test_local_state_machine import assert_invariants
from tests.integration.test_providers_local import shortest_moves
from tests.ollama_server import ScriptedOllama
from tests.ollama_server import error as ollama_error
from tests.ollama_server import tool_calls as ollama_calls
from tests.scripted_server import trickle

MAZE = "perfect-7"
PRICES = {"inputPerMTok": 2.0, "outputPerMTok": 8.0}


def stalled():
    """An answer that never comes: the status line, then one header byte every 0.2 s, forever."""
    return trickle(0.2, itertools.chain([b"HTTP/1.1 200 OK\r\nX-Slow: "], itertools.repeat(b"a")))


def experiment(local, experiment_id: int) -> dict:
    return local.store.conn.execute("SELECT * FROM experiments WHERE id = %s", (experiment_id,)).fetchone()


def failed_attempts(local, experiment_id: int) -> list[dict]:
    return local.store.conn.execute(
        "SELECT f.turn_number, f.error, count(c.call_index) AS calls, coalesce(sum(c.input_tokens), 0) AS input_tokens "
        "  FROM failed_attempts f LEFT JOIN failed_attempt_calls c USING (attempt) "
        " WHERE f.experiment_id = %s GROUP BY f.attempt ORDER BY min(f.recorded_at)",
        (experiment_id,),
    ).fetchall()


def canonical_sha256(body: dict) -> str:
    """SHA-256 of a request body in canonical JSON (keys sorted, no spaces), as the docs define ``sent_sha256``."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def cost(input_tokens: int, output_tokens: int) -> Decimal:
    priced = Decimal(input_tokens) * Decimal(str(PRICES["inputPerMTok"]))
    return ((priced + Decimal(output_tokens) * Decimal(str(PRICES["outputPerMTok"]))) / 1_000_000).quantize(
        Decimal("0.000001")
    )


def test_a_turn_retried_after_a_stall_keeps_the_calls_its_failed_attempt_got_answered(local):
    moves = shortest_moves(MAZE)
    with openai_server.ScriptedOpenAI(
        # the first attempt of turn 1: two calls answered, the third never is (the request timeout ends it)
        openai_server.tool_calls((moves[0], {}), prompt_tokens=1001, completion_tokens=11),
        openai_server.tool_calls((moves[1], {}), prompt_tokens=1002, completion_tokens=12),
        stalled(),
        # the state machine's retry of turn 1 plays it again, to the goal
        *[openai_server.tool_calls((m, {}), prompt_tokens=1003, completion_tokens=13) for m in moves],
    ) as server:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": "scripted",
                "prices": PRICES,
                "config": {"baseUrl": server.base_url, "requestTimeoutSeconds": 1},
            }
        )
        billed = server.billed()
    data = result.as_json()
    row = experiment(local, data["experiment_id"])
    assert data["status"] == "succeeded" and data["turns"] == 1 and data["actions"] == len(moves)
    assert (row["input_tokens"], row["output_tokens"]) == billed == (1001 + 1002 + 1003 * 8, 11 + 12 + 13 * 8)
    assert (row["failed_input_tokens"], row["failed_output_tokens"]) == (1001 + 1002, 11 + 12)
    assert row["failed_attempts"] == 1 and row["failed_model_calls"] == 2 and row["model_calls"] == 10
    assert row["cost_usd"] == cost(*billed) and row["failed_cost_usd"] == cost(1001 + 1002, 11 + 12)
    shown = (data["failed_attempts"], data["failed_tokens"], data["failed_cost_usd"])  # oriole run --json
    assert shown == (1, 1001 + 1002 + 11 + 12, float(cost(1001 + 1002, 11 + 12)))
    [attempt] = failed_attempts(local, data["experiment_id"])
    assert attempt["turn_number"] == 1 and attempt["calls"] == 2 and attempt["input_tokens"] == 2003
    assert attempt["error"].startswith("ModelTimeout: the OpenAI-compatible server model 'scripted' at ")
    assert_invariants(local.store, data["experiment_id"])


@pytest.mark.parametrize("prices", [PRICES, None], ids=["priced", "unpriced"])
def test_an_experiment_whose_turn_fails_on_every_attempt_keeps_every_answered_call(local, prices):
    """Priced, the failed attempts' cost is in the run's and apart; unpriced, both are unknown (NULL), never $0, and
    the report's note says the sum over runs leaves it out."""
    from oriole_workstation import report_html
    from oriole_workstation.report import Format, GroupBy, render_report
    from oriole_workstation.results import Filters, Results

    moves = shortest_moves(MAZE)
    failing = [ollama_error(500, "out of memory")] * 3  # what the transport retries within one call
    attempt = [ollama_calls((moves[0], {}), prompt_eval_count=700, eval_count=7), *failing]
    with ScriptedOllama(*attempt * 3) as server:  # the first attempt, and the state machine's two retries
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "ollama",
                "modelName": "scripted",
                **({"prices": prices} if prices else {}),
                "config": {"endpoint": server.url},
            }
        )
        billed = server.billed()
    data = result.as_json()
    row = experiment(local, data["experiment_id"])
    assert data["status"] == "failed" and data["failure_reason"].startswith("ModelUnavailable: Ollama")
    assert data["turns"] == 0 and data["actions"] == 0  # nothing committed
    assert (row["input_tokens"], row["output_tokens"]) == billed == (3 * 700, 3 * 7)
    assert (row["failed_input_tokens"], row["failed_output_tokens"], row["failed_attempts"]) == (2100, 21, 3)
    if prices:
        assert row["cost_usd"] == row["failed_cost_usd"] == cost(*billed) > 0
    else:
        assert row["cost_usd"] is None and row["failed_cost_usd"] is None and data["failed_cost_usd"] is None
    chosen = Filters(ids=(data["experiment_id"],))
    spent = f"${float(cost(*billed)):.4f}" if prices else "unpriced"
    note = f"spent on failed attempts: 2,121 tokens, {spent} in 3 call(s) of 3 attempt(s) in 1 run(s)"
    assert note in render_report(Results(local.store.conn), filters=chosen, width=None)
    assert f"<li>{note}" in report_html.render(Results(local.store.conn), GroupBy.family, chosen)  # the page too
    [as_json] = json.loads(render_report(Results(local.store.conn), Format.json, filters=chosen))
    [as_csv] = csv.DictReader(io.StringIO(render_report(Results(local.store.conn), Format.csv, filters=chosen)))
    fields = {"failed_runs": 1, "failed_attempts": 3, "failed_calls": 3, "failed_tokens": 2121}
    fields |= {"failed_cost_usd": float(cost(*billed)) if prices else None, "failed_unpriced_runs": 0 if prices else 1}
    assert {k: as_json[k] for k in fields} == fields  # the note's figures as fields of the group's row
    assert {k: as_csv[k] for k in fields} == {k: "" if v is None else str(v) for k, v in fields.items()}
    assert [a["error"].split(":")[0] for a in failed_attempts(local, data["experiment_id"])] == ["ModelUnavailable"] * 3
    stored = local.store.conn.execute(
        "SELECT c.response ->> 'sent_sha256' AS sent FROM failed_attempt_calls c JOIN failed_attempts f USING (attempt)"
        " WHERE f.experiment_id = %s",
        (data["experiment_id"],),
    ).fetchall()
    received = {canonical_sha256(r.body) for r in server.requests}  # every body the server got, hashed here
    assert len(stored) == 3 and all(row["sent"] in received for row in stored)  # each answered call's request
    assert_invariants(local.store, data["experiment_id"])


def test_the_token_budget_ends_the_run_as_the_agents_failure_counting_the_committed_turns_only(local):
    moves = shortest_moves(MAZE)
    with openai_server.ScriptedOpenAI(
        # a failed attempt: 170 tokens answered, under the budget of 300, then a stall
        openai_server.tool_calls((moves[0], {}), prompt_tokens=150, completion_tokens=20),
        stalled(),
        *[openai_server.tool_calls((m, {}), prompt_tokens=100, completion_tokens=10) for m in moves],
    ) as server:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": "scripted",
                "config": {"baseUrl": server.base_url, "requestTimeoutSeconds": 1, "maxTotalTokens": 300},
            }
        )
        billed = server.billed()
    data = result.as_json()
    row = experiment(local, data["experiment_id"])
    assert (data["status"], row["ending"], row["ending_cause"]) == ("timed_out", "agent", "max_tokens")
    assert data["failure_reason"] == "max_tokens reached: 330 tokens of 300 allowed"
    assert data["turns"] == 1 and data["actions"] == 3  # the third call reached the budget: no fourth
    turn = local.store.conn.execute("SELECT end_reason FROM turns WHERE experiment_id = %s", (data["experiment_id"],))
    assert turn.fetchone()["end_reason"] == "max_tokens"
    assert (row["input_tokens"], row["output_tokens"]) == billed == (450, 50)  # every call is still counted
    assert_invariants(local.store, data["experiment_id"])


def test_a_prompt_the_server_counts_over_the_context_budget_is_flagged_in_the_transcript_and_the_report(local):
    """Trimming estimates tokens; the server counts them. A window of 2,000 with answers of up to 1,024 tokens
    leaves 1,000 for the prompt (half the window kept for the answer); the server counting 1,500 is flagged."""
    from oriole_workstation import report_html, transcript
    from oriole_workstation.report import Format, GroupBy, render_report
    from oriole_workstation.results import Filters, Results

    moves = shortest_moves(MAZE)
    with openai_server.ScriptedOpenAI(
        openai_server.tool_calls((moves[0], {}), prompt_tokens=1500, completion_tokens=10),
        *[openai_server.tool_calls((m, {}), prompt_tokens=900, completion_tokens=10) for m in moves[1:]],
    ) as server:
        config = {"baseUrl": server.base_url, "contextTokens": 2000, "maxOutputTokens": 1024}
        data = local.run({"mazeId": MAZE, "llmProvider": "openai", "modelName": "scripted", "config": config})
        data = data.as_json()
    [context] = local.store.conn.execute(
        "SELECT context FROM turns WHERE experiment_id = %s AND context ? 'over_budget'", (data["experiment_id"],)
    ).fetchall()
    assert context["context"]["over_budget"] == [{"call": 1, "prompt_tokens": 1500, "budget": 1000}]
    text = transcript.text(transcript.load(local.store.conn, data["experiment_id"]))
    assert "call 1: the server counted 1,500 prompt tokens, over the context budget of 1,000" in text
    chosen = Filters(ids=(data["experiment_id"],))
    note = "1 model call(s) in 1 run(s) had a prompt the server counted over the context budget"
    assert note in render_report(Results(local.store.conn), filters=chosen, width=None)
    for output in (Format.json, Format.csv):
        text = render_report(Results(local.store.conn), output, filters=chosen)
        [row] = json.loads(text) if output is Format.json else csv.DictReader(io.StringIO(text))
        assert (int(row["over_budget_calls"]), int(row["over_budget_runs"])) == (1, 1)
    assert f"<li>{note}" in report_html.render(Results(local.store.conn), GroupBy.family, chosen)  # the page too
