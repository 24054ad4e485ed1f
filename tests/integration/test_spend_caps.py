"""No run spends past what its researcher set (issue 32): an experiment's safety caps (``maxInputTokens``,
``maxCostUsd``) end it censored (spend_cap) with its stored tokens and cost at most one turn over; a sweep's spend
limit counts each running experiment at its cap and the next one's too, so it is never overshot by more than one
turn per running experiment; on AWS a sweep of models needs a limit unless its file says otherwise; and a sweep
planned in an account of little Lambda concurrency starts no more at once than fits. Real OpenAI-compatible servers
on loopback, the local state machines, PostgreSQL."""

from __future__ import annotations

import uuid

import pytest

from oriole.core.endings import closing
from oriole.errors import SweepFileError
from oriole.lifecycle import sweep_tasks
from oriole.lifecycle.task_io import SweepRequest
from oriole.statuses import Ending, EndingCause
from oriole.store import Store, db
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws
from tests import openai_server
from tests.integration.conftest import TIME_SCALE, Local
from tests.integration.test_sweep_local import max_overlap, run_sweep

TOKENS = (1000, 100)  # each reply's prompt and completion tokens
PRICE = (2.0, 8.0)  # USD per million input and output tokens
CALL_USD = (TOKENS[0] * PRICE[0] + TOKENS[1] * PRICE[1]) / 1e6  # one call: $0.0028
MOVES = ("move_north", "move_east", "move_south", "move_west")


def server(calls: int = 400) -> openai_server.ScriptedOpenAI:
    """A model that always moves (one call a turn: maxActionsPerTurn 1), at ``TOKENS`` a call."""
    replies = [
        openai_server.tool_calls((MOVES[i % 4], {}), prompt_tokens=TOKENS[0], completion_tokens=TOKENS[1])
        for i in range(calls)
    ]
    return openai_server.ScriptedOpenAI(*replies, models=("capped",))


def rows(store: Store, sweep_id: str) -> list[dict]:
    return store.conn.execute(
        "SELECT id, status, failure_reason, ending, ending_cause, input_tokens, cost_usd::float AS cost_usd, "
        "       model_calls, turn_count, config, started_at, completed_at "
        "  FROM experiments WHERE agent_id LIKE %s ORDER BY id",
        (sweep_id + "/%",),
    ).fetchall()


def agent(url: str) -> str:
    return (
        f'[[agents]]\nprovider = "openai"\nmodel = "capped"\nconfig = {{ baseUrl = "{url}" }}\n'
        f"prices = {{ input_per_mtok = {PRICE[0]}, output_per_mtok = {PRICE[1]} }}\n"
    )


@pytest.mark.parametrize(
    ("cap", "crossed"),
    [("maxCostUsd = 0.01", "maxCostUsd"), ("maxInputTokens = 4500", "maxInputTokens")],
)
def test_a_sweep_s_experiments_stop_censored_at_their_cap_at_most_one_turn_over(cli, store, tmp_path, cap, crossed):
    """Each experiment would walk for 200 moves; the cap ends it after the turn that crossed it: censored by the
    spend cap (never the agent's failure), its stored cost or tokens over the cap by less than that last turn."""
    sweep_id = f"capped-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "capped.toml"
    with server() as model:
        file.write_text(
            f'id = "{sweep_id}"\nmazes = ["sparse-60"]\nrepetitions = 2\nconcurrency = 2\n'
            f"[[configs]]\nmaxMoves = 200\nmaxActionsPerTurn = 1\n{cap}\n{agent(model.base_url)}"
        )
        result = cli("sweep", str(file), "--quiet")
    assert result.exit_code == 0, result.output
    found = rows(store, sweep_id)
    assert len(found) == 2
    for row in found:
        assert (row["ending"], row["ending_cause"]) == (Ending.CENSORED, EndingCause.SPEND_CAP), row
        assert row["failure_reason"].startswith("spend cap reached:") and crossed in row["failure_reason"]
        assert closing(row["status"], row["failure_reason"]).cause == EndingCause.SPEND_CAP
        if crossed == "maxCostUsd":
            cap_usd = row["config"]["maxCostUsd"]
            assert cap_usd <= row["cost_usd"] < cap_usd + CALL_USD  # one turn (one call) over at most
        else:
            cap_tokens = row["config"]["maxInputTokens"]
            assert cap_tokens <= row["input_tokens"] < cap_tokens + TOKENS[0]
        assert row["model_calls"] == row["turn_count"] < 200  # it stopped long before its moves ran out


def test_the_spend_limit_counts_running_experiments_at_their_caps(cli, store, tmp_path):
    """Two at once, each capped at $0.01: an experiment starts only when what the sweep spent, the running one
    counted at its cap and the new one's cap fit in the limit; the sweep's spend stays within the limit and one
    turn per experiment that ran."""
    sweep_id = f"limited-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "limited.toml"
    cap, limit = 0.01, 0.025
    with server() as model:
        file.write_text(
            f'id = "{sweep_id}"\nmazes = ["sparse-60"]\nrepetitions = 6\nconcurrency = 2\nspend_limit_usd = {limit}\n'
            f"[[configs]]\nmaxMoves = 200\nmaxActionsPerTurn = 1\nmaxCostUsd = {cap}\n{agent(model.base_url)}"
        )
        result = cli("sweep", str(file), "--quiet")
    assert result.exit_code == 3, result.output  # some were skipped
    found = rows(store, sweep_id)
    costs = [row["cost_usd"] for row in found]
    assert 2 <= len(found) < 6, costs
    for row in found:  # at its start: the ended ones' cost, the running ones at their caps, and its own cap
        ended = sum(r["cost_usd"] for r in found if r["completed_at"] <= row["started_at"])
        running = sum(cap for r in found if r["started_at"] < row["started_at"] < r["completed_at"])
        assert ended + running + cap <= limit + 1e-9, (row["id"], ended, running)
    assert sum(costs) < limit + len(found) * CALL_USD  # over the limit by at most one turn per experiment
    assert all(row["config"]["maxCostUsd"] == cap for row in found)


def test_a_limit_below_one_experiment_s_cap_is_refused_before_anything_starts(cli, store, tmp_path):
    sweep_id = f"tight-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "tight.toml"
    file.write_text(
        f'id = "{sweep_id}"\nmazes = ["perfect-7"]\nspend_limit_usd = 1.0\n[[configs]]\nmaxCostUsd = 2.5\n'
        f"{agent('http://127.0.0.1:9/v1')}"
    )
    result = cli("sweep", str(file), "--quiet", "--no-server-check")  # no server: the limit is refused first
    assert result.exit_code == 2, result.output
    assert "below one experiment's maxCostUsd (2.5 for openai/capped)" in result.output
    assert rows(store, sweep_id) == []


class Planner:
    """PlanSweep's task as it runs on AWS: a spend limit required, the account's concurrency as given."""

    def __init__(self, concurrency: int | None = None, required: bool = True):
        self.where = sweep_tasks.Deployment(
            lambda: ["v1"], lambda: {}, lambda: None, spend_limit_required=required, concurrency=lambda: concurrency
        )

    def __call__(self, store: Store, sweep: dict) -> dict:
        return sweep_tasks.plan_run(SweepRequest.model_validate(sweep), store, self.where).as_state()


def test_on_aws_a_sweep_of_models_needs_a_spend_limit_unless_its_file_says_otherwise(store):
    models = {"id": f"aws-{uuid.uuid4().hex[:8]}", "agents": ["bedrock/model-x"], "mazes": ["perfect-7"]}
    with pytest.raises(SweepFileError, match=r"without spend_limit_usd.*unlimited_spend = true"):
        Planner()(store, models)
    assert Planner()(store, {**models, "unlimited_spend": True})["planned"] == 1
    assert Planner()(store, {**models, "spend_limit_usd": 20, "allow_unpriced": True})["planned"] == 1
    assert Planner(required=False)(store, models)["planned"] == 1  # locally: the researcher's own machine
    baselines = {**models, "agents": ["baseline/oracle", "baseline/random"]}
    assert Planner()(store, baselines)["planned"] == 2  # no model: nothing to spend


def test_the_caps_fit_the_account_s_lambda_concurrency(store):
    """A new account runs 10 functions at once: the sweep's caps (bedrock 4, openai 4, baseline 8 by default) are
    shared out within 8, two left for the sweep's own looks, the finalizer and the reconciler; a standard
    account's 1,000 changes nothing; an account with room for fewer experiments than providers is refused."""
    sweep = {
        "id": f"quota-{uuid.uuid4().hex[:8]}",
        "agents": ["bedrock/model-x", "openai/model-y", "baseline/oracle"],
        "mazes": ["perfect-7"],
        "unlimited_spend": True,
    }
    caps = Planner(concurrency=10)(store, sweep)["caps"]
    assert sum(caps[p] for p in ("bedrock", "openai", "baseline")) == 8 and min(caps.values()) >= 1
    assert Planner(concurrency=1000)(store, sweep)["caps"] == Planner(concurrency=None)(store, sweep)["caps"]
    with pytest.raises(SweepFileError, match="leaves room for 2 experiment"):
        Planner(concurrency=4)(store, sweep)


def test_a_sweep_in_an_account_of_ten_starts_no_more_at_once_than_fit(database_url, store):
    """Through the local sweep state machine, in an account whose Lambda runs 10 functions at once, a sweep asking
    for 20 at once runs at most 8."""
    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE, account_concurrency=10) as aws:
        local = Local(aws, Results(conn))
        sweep_id = f"ten-{uuid.uuid4().hex[:8]}"
        sweep = {
            "id": sweep_id,
            "agents": ["baseline/explorer"],
            "mazes": ["perfect-21"],
            "repetitions": 12,
            "provider_concurrency": {"baseline": 20},
        }
        execution, summary = run_sweep(local, sweep)
    conn.close()
    assert execution["status"] == "SUCCEEDED" and summary["succeeded"] == 12
    assert max_overlap(rows(store, sweep_id)) <= 8
