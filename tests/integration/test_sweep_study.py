"""The study a researcher builds a paper on, run as they would run it (``oriole sweep FILE`` through the local
sweep state machine, two real OpenAI-compatible HTTP servers on loopback, PostgreSQL): each agent's requests go
to its own server only and the baseline sends none; every stored cost is exactly tokens times the file's prices;
a spend limit stops new starts, never overshooting by more than what was already running; the file replayed
under --seed-from gives every random-baseline trajectory back action for action; ``ls`` and ``report`` fit a
terminal of 100 columns."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest

from oriole.store import Store
from tests import openai_server

TOKENS = (1000, 100)  # each reply's prompt and completion tokens
PRICES = {"model-a": (0.40, 1.60), "model-b": (0.15, 0.60)}
MAX_MOVES = 3


def server(model: str) -> openai_server.ScriptedOpenAI:
    """A server that serves ``model`` (its listing says so) and answers every request with a move."""
    reply = openai_server.tool_calls(("move_north", {}), prompt_tokens=TOKENS[0], completion_tokens=TOKENS[1])
    return openai_server.ScriptedOpenAI(*[reply] * 200, models=(model,))


def study(sweep_id: str, a_url: str, b_url: str) -> str:
    """Two OpenAI-compatible agents, each on its own server with its own prices, and the random baseline."""
    agents = "".join(
        f'[[agents]]\nlabel = "{model}"\nprovider = "openai"\nmodel = "{model}"\nconfig = {{ baseUrl = "{url}" }}\n'
        f"prices = {{ input_per_mtok = {PRICES[model][0]}, output_per_mtok = {PRICES[model][1]} }}\n"
        for model, url in (("model-a", a_url), ("model-b", b_url))
    )
    return (
        f'id = "{sweep_id}"\nmazes = ["perfect-7", "perfect-9"]\nrepetitions = 2\nconcurrency = 2\n'
        f'[[configs]]\nmaxMoves = {MAX_MOVES}\n{agents}[[agents]]\nprovider = "baseline"\nmodel = "random"\n'
    )


def experiments(store: Store, sweep_id: str) -> list[dict]:
    return store.conn.execute(
        "SELECT e.id, agent_id, llm_provider, model_name, agent_label, e.seed, input_tokens, output_tokens, "
        "       model_calls, cost_usd, config->'pricing' AS pricing, started_at, completed_at, m.name AS maze_name "
        "  FROM experiments e JOIN mazes m ON m.id = e.maze_id WHERE agent_id LIKE %s ORDER BY e.id",
        (sweep_id + "/%",),
    ).fetchall()


def trajectories(store: Store, sweep_id: str) -> dict[str, list[tuple]]:
    """Each random-baseline repetition (its agent id less the sweep id) -> its actions, in order."""
    rows = store.conn.execute(
        "SELECT e.agent_id, a.step_number, a.tool_name, a.to_x, a.to_y FROM actions a "
        "  JOIN experiments e ON e.id = a.experiment_id "
        " WHERE e.agent_id LIKE %s AND e.model_name = 'random' ORDER BY e.id, a.step_number",
        (sweep_id + "/%",),
    ).fetchall()
    out: dict[str, list[tuple]] = {}
    for row in rows:
        out.setdefault(row["agent_id"].split("/", 1)[1], []).append(tuple(row.values())[1:])
    return out


def test_two_servers_and_a_baseline_each_get_only_their_own_requests_at_their_own_prices(
    cli, store, tmp_path, monkeypatch
):
    sweep_id = f"study-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "study.toml"
    with server("model-a") as a, server("model-b") as b:
        file.write_text(study(sweep_id, a.base_url, b.base_url))
        dry = cli("sweep", str(file), "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert (len(a.listings), len(b.listings), a.requests) == (1, 1, [])  # each server asked once, nothing sent
        assert f"model server {a.base_url}: the OpenAI-compatible server at {a.base_url} serves model-a" in dry.stderr
        plan = dry.stdout.splitlines()
        assert len(plan) == 12  # 3 agents x 2 mazes x 2 repetitions, nothing crossed with another's server
        assert all(line.endswith(f"-> {a.base_url}") for line in plan if "model-a" in line)
        assert all(line.endswith(f"-> {b.base_url}") for line in plan if "model-b" in line)
        assert all(line.endswith("-> no model server") for line in plan if "baseline/random" in line)
        result = cli("sweep", str(file))
        assert result.exit_code == 0, result.output
        a_requests, b_requests = list(a.requests), list(b.requests)
        # the same file again, under its own id with the seeds of the first: every random walk comes back
        again_id = f"{sweep_id}-again"
        file.write_text(study(again_id, a.base_url, b.base_url))
        replay = cli("sweep", str(file), "--seed-from", sweep_id, "--quiet")
        assert replay.exit_code == 0, replay.output
    first, second = trajectories(store, sweep_id), trajectories(store, again_id)
    assert len(first) == 4 and first == second
    seeds = [
        {r["agent_id"].split("/", 1)[1]: r["seed"] for r in experiments(store, one)} for one in (sweep_id, again_id)
    ]
    assert seeds[0] == seeds[1] and len(set(seeds[0].values())) == 4  # a seed of its own for each repetition
    rows = experiments(store, sweep_id)
    assert len(rows) == 12
    shared: dict[tuple[str, str], set[int]] = {}  # (maze, repetition) -> the seeds its three agents met
    for r in rows:
        shared.setdefault((r["maze_name"], r["agent_id"].rsplit("/", 1)[1]), set()).add(r["seed"])
    assert len(shared) == 4 and all(len(found) == 1 for found in shared.values())  # every agent the same seed
    for model, requests in (("model-a", a_requests), ("model-b", b_requests)):
        mine = [r for r in rows if r["model_name"] == model]
        assert len(mine) == 4 and {r["agent_label"] for r in mine} == {model}
        assert {r.body["model"] for r in requests} == {model}  # only its own model's requests
        assert len(requests) == sum(r["model_calls"] for r in mine) > 0
        for r in mine:  # stored costs: tokens times the file's prices, recorded with where they came from
            price_in, price_out = PRICES[model]
            assert r["pricing"]["inputPerMTok"] == price_in and r["pricing"]["source"].startswith("sweep file")
            expected = (
                Decimal(r["input_tokens"]) * Decimal(str(price_in))
                + Decimal(r["output_tokens"]) * Decimal(str(price_out))
            ) / 1_000_000
            assert r["cost_usd"] == expected.quantize(Decimal("0.000001")) > 0
    baselines = [r for r in rows if r["llm_provider"] == "baseline"]
    assert len(baselines) == 4 and all(
        r["input_tokens"] + r["output_tokens"] == 0 and r["cost_usd"] == 0 for r in baselines
    )

    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # a terminal of 100 columns
    monkeypatch.setenv("COLUMNS", "100")
    for command in (("ls", "--sweep", sweep_id), ("report", "--sweep", sweep_id)):
        shown = cli(*command)
        assert shown.exit_code == 0, shown.output
        assert max(map(len, shown.stdout.splitlines())) <= 100, shown.stdout
    listed = cli("ls", "--sweep", sweep_id, "--limit", "0").stdout
    assert " model-a " in listed and "openai/model-a" not in listed  # ls names an agent by its label


def test_a_spend_limit_stops_new_starts_and_overshoots_only_by_what_was_running(cli, store, tmp_path):
    """Each experiment capped at what it costs (maxCostUsd): an experiment starts only while what ended before it
    and its own cap fit in the limit, so the sweep ends within the limit."""
    sweep_id = f"limit-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "limit.toml"
    per_experiment = MAX_MOVES * (TOKENS[0] * PRICES["model-a"][0] + TOKENS[1] * PRICES["model-a"][1]) / 1e6
    limit = 2.5 * per_experiment  # the third start would need 3 experiments' caps: it is skipped
    with server("model-a") as a:
        file.write_text(
            f'id = "{sweep_id}"\nmazes = ["perfect-9"]\nrepetitions = 6\nconcurrency = 1\n'
            f"spend_limit_usd = {limit}\n[[configs]]\nmaxMoves = {MAX_MOVES}\nmaxCostUsd = {per_experiment}\n"
            f'[[agents]]\nprovider = "openai"\nmodel = "model-a"\nconfig = {{ baseUrl = "{a.base_url}" }}\n'
            f"prices = {{ input_per_mtok = {PRICES['model-a'][0]}, "
            f"output_per_mtok = {PRICES['model-a'][1]} }}\n"
        )
        result = cli("sweep", str(file), "--quiet")
    assert result.exit_code == 3, result.output
    rows = experiments(store, sweep_id)
    costs = [float(r["cost_usd"]) for r in rows]
    assert len(rows) == 2 and "4 skipped" in result.stdout.splitlines()[0], result.stdout
    for index, row in enumerate(rows):  # each started while what had ended before it and its cap fit
        ended_before = sum(c for r, c in zip(rows, costs, strict=True) if r["completed_at"] <= row["started_at"])
        assert ended_before + per_experiment <= limit, (index, ended_before)
    assert sum(costs) <= limit  # each experiment within its cap: the sweep within its limit
    assert json.loads(json.dumps(costs)) == [per_experiment] * 2


def test_prices_come_from_the_file_then_oriole_prices_and_an_unpriced_model_is_refused_under_a_limit(
    cli, store, tmp_path
):
    sweep_id = f"priced-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "priced.toml"
    with server("model-c") as c:
        file.write_text(
            f'id = "{sweep_id}"\nmazes = ["perfect-7"]\nspend_limit_usd = 1.0\n[[configs]]\n'
            f'maxMoves = {MAX_MOVES}\nmaxCostUsd = 0.5\n[[agents]]\nprovider = "openai"\nmodel = "model-c"\n'
            f'config = {{ baseUrl = "{c.base_url}" }}\n'
        )
        refused = cli("sweep", str(file), "--dry-run")
        assert refused.exit_code == 2 and "no price is known for openai/model-c" in refused.stderr
        assert "--allow-unpriced" in refused.stderr and experiments(store, sweep_id) == []
        set_ = cli("prices", "set", "model-c", "--input", "2", "--output", "8")
        assert set_.exit_code == 0, set_.output
        listed = [line.split()[:3] for line in cli("prices", "list").stdout.splitlines()]
        assert ["model-c", "2", "8"] in listed
        dry = cli("sweep", str(file), "--dry-run")
        assert dry.exit_code == 0 and "price of openai/model-c: $2 / $8 per million tokens" in dry.stderr
        assert cli("sweep", str(file), "--quiet").exit_code == 0
        assert len(c.requests) > 0
    [row] = experiments(store, sweep_id)
    source = "Parameter Store /oriole/pricing/model-c"  # the local prices file, seeded into the local store
    assert row["pricing"] == {"inputPerMTok": 2, "outputPerMTok": 8, "source": source}
    assert float(row["cost_usd"]) == pytest.approx((row["input_tokens"] * 2 + row["output_tokens"] * 8) / 1e6)
    assert cli("prices", "unset", "model-c").exit_code == 0
    assert "model-c" not in cli("prices", "list").stdout


def test_a_spend_limit_counts_what_failed_attempts_spent_and_stops_new_starts(cli, store, tmp_path):
    """Issue 37's sweep: every repetition's turn failed after calls the server billed, the sweep recorded $0 and
    started them all. The first repetition's failed attempts now reach the limit, and no other starts."""
    sweep_id = f"failing-{uuid.uuid4().hex[:8]}"
    answered = openai_server.tool_calls(("move_north", {}), prompt_tokens=20_000, completion_tokens=100)
    attempt = [answered, *[openai_server.error(500, "The server had an error")] * 3]
    # beyond the script, every request gets a 500
    with openai_server.ScriptedOpenAI(*attempt * 3, models=("model-a",)) as server:
        file = tmp_path / "failing.toml"
        file.write_text(
            f'id = "{sweep_id}"\nmazes = ["perfect-9"]\nrepetitions = 4\nconcurrency = 1\nspend_limit_usd = 0.05\n'
            "[[configs]]\nmaxCostUsd = 0.04\n"  # the limit holds one experiment at its cap
            f'[[agents]]\nprovider = "openai"\nmodel = "model-a"\nconfig = {{ baseUrl = "{server.base_url}" }}\n'
            "prices = { input_per_mtok = 2.0, output_per_mtok = 8.0 }\n"
        )
        result = cli("sweep", str(file), "--quiet")
        billed = server.billed()
    assert result.exit_code == 1, result.output  # the error is reported first; the limit skipped the rest
    rows = store.conn.execute(
        "SELECT status, input_tokens, output_tokens, cost_usd, failed_cost_usd FROM experiments WHERE sweep_id = %s",
        (sweep_id,),
    ).fetchall()
    assert len(rows) == 1 and "1 error, 3 skipped" in result.stdout, result.stdout
    [row] = rows
    assert row["status"] == "failed" and (row["input_tokens"], row["output_tokens"]) == billed == (60_000, 300)
    spent = (Decimal(billed[0]) * 2 + Decimal(billed[1]) * 8) / 1_000_000
    assert row["cost_usd"] == row["failed_cost_usd"] == spent >= Decimal("0.05")
    assert store.sweep_spend(sweep_id) == float(spent)
    report = " ".join(cli("report", "--sweep", sweep_id).stdout.split())
    assert f"spent on failed attempts: 60,300 tokens, ${spent:.4f} in 3 call(s) of 3 attempt(s) in 1 run(s)" in report


def memory_study(sweep_id: str, url: str, mode: str) -> str:
    """One model as two agents that differ only in how many earlier turns they carry, under historyMode ``mode``."""
    agents = "".join(
        f'[[agents]]\nlabel = "{label}"\nprovider = "openai"\nmodel = "model-a"\n'
        f'config = {{ baseUrl = "{url}", historyMode = "{mode}", historyTurns = {turns} }}\n'
        for label, turns in (("short", 1), ("long", 10))
    )
    return f'id = "{sweep_id}"\nmazes = ["perfect-7"]\n[[configs]]\nmaxMoves = {MAX_MOVES}\n{agents}'


def test_agents_differing_only_in_a_setting_that_plays_no_part_are_refused_and_where_it_does_they_split(
    cli, store, tmp_path
):
    """historyTurns plays a part only when a memory mode carries turns: a sweep whose agents differ only in it under
    historyMode actions would show two groups of one condition, so `oriole sweep` refuses it before anything starts
    (exit 2, naming the agent, the key and what it needs); under conversation it is the variable, stored, and the
    report splits on it by name."""
    idle, carried = (f"turns-{uuid.uuid4().hex[:8]}-{mode}" for mode in ("actions", "conversation"))
    file = tmp_path / "memory.toml"
    with server("model-a") as a:
        file.write_text(memory_study(idle, a.base_url, "actions"))
        refused = cli("sweep", str(file), "--quiet")
        assert refused.exit_code == 2 and not a.requests and not experiments(store, idle)
        assert " ".join(refused.stderr.split()) == (
            'error: InvalidConfig: agent short with historyMode="actions" historyTurns=1 maxMoves=3: '
            "config.historyTurns applies only with historyMode = conversation or summary (here historyMode is "
            "actions): it would play no part; leave it out, or set historyMode"
        )
        file.write_text(memory_study(carried, a.base_url, "conversation"))
        ran = cli("sweep", str(file), "--quiet")
        assert ran.exit_code == 0, ran.output
    stored = store.conn.execute(
        "SELECT agent_label, config FROM experiments WHERE sweep_id = %s ORDER BY agent_label", (carried,)
    ).fetchall()
    assert [(r["agent_label"], r["config"]["historyTurns"]) for r in stored] == [("long", 10), ("short", 1)]
    assert not any({"compaction", "imageView"} & set(r["config"]) for r in stored)  # no summary, no picture
    report = " ".join(cli("report", "--sweep", carried).stdout.split())
    assert "historyTurns" in report and "compaction" not in report and "imageView" not in report, report
