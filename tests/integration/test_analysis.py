"""The analysis views (migrations/views/) and `oriole report`, on hand-built experiments
whose answers are worked out by hand: tiles visited, revisits, path efficiency, latency, the varied
configuration, medians, per-run and per-success figures and the Wilson interval."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Iterator

import pytest
from psycopg.types.json import Jsonb
from typer.testing import CliRunner

from oriole.config import resolve
from oriole.core.endings import closing
from oriole.store import Store, db
from oriole_workstation.cli import app
from oriole_workstation.results import Filters, Results
from tests.conftest import scratch_database

# A 4x3 maze: start (0, 0), goal (3, 2), shortest path 5 (east 3, south 2).
CORRIDOR = {
    "id": 9001,
    "name": "test-corridor",
    "family": "handmade",
    "grid": [[0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 2]],
    "start": (0, 0),
    "goal": (3, 2),
    "shortest": 5,
}

# The walker's run on it: a wall hit, a step back onto the start, a revisit, a recall, then the goal.
WALK = [
    ("move_east", (0, 0), (1, 0), True),
    ("move_south", (1, 0), (1, 0), False),
    ("move_west", (1, 0), (0, 0), True),
    ("move_east", (0, 0), (1, 0), True),
    ("recall_all", (1, 0), (1, 0), True),
    ("move_east", (1, 0), (2, 0), True),
    ("move_east", (2, 0), (3, 0), True),
    ("move_south", (3, 0), (3, 1), True),
    ("move_south", (3, 1), (3, 2), True),
]


class Seeder:
    """Inserts experiments with chosen counters, actions and turns straight into the tables."""

    def __init__(self, conn):
        self.conn, self.count = conn, 0

    def experiment(
        self,
        model: str,
        status: str,
        *,
        provider: str = "ollama",
        prompt: str = "v1",
        actions: int = 0,
        moves: int | None = None,
        walk: list | None = None,
        config: dict | None = None,
        comment: str | None = None,
        started: str = "2025-03-01 10:00+00",
        tokens: tuple = (0, 0),
        cost: float = 0.0,
        turns: tuple = (),
        reason: str | None = None,
        label: str | None = None,
        sweep: str | None = None,
    ) -> int:
        """One experiment (of ``sweep``: recorded as a sweep records it, the sweep planned); ``walk`` stores actions
        (and derives the counters), ``turns`` is a list of (first step, action count, model calls, latency ms). Its
        aggregates are recounted from those rows (``recount_experiments``), as migration 0005 did for rows stored
        before it."""
        self.count += 1
        walk = walk or []
        if walk:
            actions = len(walk)
            moves = sum(a[0].startswith("move_") for a in walk)
        snapshot = {**resolve({}, config or {}), "seed": self.count, "pricing": None}
        if reason is None and status not in ("running", "succeeded"):
            reason = "max_moves reached: the action budget" if status == "timed_out" else "reason"
        ended = closing(status, reason)
        if sweep is not None:
            self.conn.execute(
                "INSERT INTO sweeps (id, planned, run_input) VALUES (%s, 0, '{}') ON CONFLICT DO NOTHING", (sweep,)
            )
        row = self.conn.execute(
            """
            INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text,
                agent_id, comment, config, seed, status, ending, ending_cause, goal_found, goal_first_seen_step,
                current_x, current_y, action_count, move_count, failed_move_count, recall_count, turn_count,
                input_tokens, output_tokens, cost_usd, started_at, completed_at, failure_reason, origin_execution_arn,
                execution_arns, agent_label, optimal_path_length, sweep_id)
            VALUES (%(maze)s, %(provider)s, %(model)s, %(prompt)s, 'hash-' || %(prompt)s, 'text', NULL,
                %(comment)s, %(config)s, %(seed)s, %(status)s, %(ending)s, %(cause)s, %(status)s = 'succeeded',
                %(seen)s, 0, 0,
                %(actions)s, %(moves)s, %(failed)s, %(recalls)s, %(turn_count)s, %(input)s, %(output)s, %(cost)s,
                %(started)s::timestamptz,
                CASE WHEN %(status)s <> 'running' THEN %(started)s::timestamptz + interval '90 seconds' END,
                %(reason)s,
                'arn:test:' || %(seed)s, ARRAY['arn:test:' || %(seed)s], %(label)s, %(optimum)s, %(sweep)s)
            RETURNING id
            """,
            {
                "maze": CORRIDOR["id"],
                "provider": provider,
                "model": model,
                "prompt": prompt,
                "comment": comment,
                "sweep": sweep,
                "config": Jsonb(snapshot),
                "seed": self.count,
                "status": status,
                "seen": 7 if walk else None,
                "reason": reason,
                "ending": ended and ended.ending,
                "cause": ended and ended.cause,
                "actions": actions,
                "moves": actions if moves is None else moves,
                "failed": sum(a[0].startswith("move_") and not a[3] for a in walk),
                "recalls": sum(a[0] == "recall_all" for a in walk),
                "turn_count": len(turns),
                "input": tokens[0],
                "output": tokens[1],
                "cost": cost,
                "started": started,
                "label": label,
                "optimum": CORRIDOR["shortest"],
            },
        ).fetchone()
        for number, (first, count, calls, latency) in enumerate(turns, 1):
            self.conn.execute(
                "INSERT INTO turns (experiment_id, turn_number, first_step, action_count, model_calls, latency_ms, "
                "end_reason, started_at) VALUES (%s, %s, %s, %s, %s, %s, 'action_budget', now())",
                (row["id"], number, first, count, calls, latency),
            )
        for step, (action, start, end, success) in enumerate(walk, 1):
            turn = next(n for n, (first, count, *_) in enumerate(turns, 1) if first <= step < first + count)
            self.conn.execute(
                "INSERT INTO actions (experiment_id, step_number, turn_number, action_type, from_x, from_y, to_x, "
                "to_y, success) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (row["id"], step, turn, action, *start, *end, success),
            )
        self.conn.execute("SELECT recount_experiments(ARRAY[%s]::bigint[])", (row["id"],))
        return row["id"]


@pytest.fixture(scope="module")
def seeded(server_url, migrated_template) -> Iterator[tuple[str, dict]]:
    """A database of its own holding the hand-built experiments; yields its URL and their ids."""
    with scratch_database(server_url, migrated_template) as url:
        store = Store(db.connect(url))
        conn = store.conn
        conn.execute(
            "INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, "
            "shortest_path_length, generator, seed, content_hash, grid) "
            "VALUES (%s, %s, %s, 4, 3, 0, 0, 3, 2, %s, 'hand', 0, 'none', %s)",
            (CORRIDOR["id"], CORRIDOR["name"], CORRIDOR["family"], CORRIDOR["shortest"], Jsonb(CORRIDOR["grid"])),
        )
        seed = Seeder(conn)
        ids = {
            "walker": seed.experiment(
                "walker",
                "succeeded",
                walk=WALK,
                config={"temperature": 0.7},
                comment="sweep:alpha  pilot",
                sweep="alpha",
                turns=((1, 5, 2, 300), (6, 4, 1, 600)),
            ),
            "idle": seed.experiment("idle", "running"),
            "one-step": seed.experiment("one-step", "timed_out", walk=WALK[:1], turns=((1, 1, 1, 50),)),
        }
        # m1: 8 successes in [5, 5, 10, 10, 20, 20, 25, 50] moves (efficiency 5/moves), 2 timeouts,
        # one failure and one running experiment that must not count; 1,100 tokens and 1 cent per run.
        for moves in (5, 5, 10, 10, 20, 20, 25, 50):
            seed.experiment(
                "m1", "succeeded", actions=moves, config={"temperature": 0.2}, tokens=(1000, 100), cost=0.01
            )
        for _ in range(2):
            seed.experiment("m1", "timed_out", actions=100, config={"temperature": 0.2}, tokens=(1000, 100), cost=0.01)
        seed.experiment("m1", "failed", actions=3, config={"temperature": 0.2}, tokens=(5000, 500), cost=1.0)
        seed.experiment("m1", "running", actions=3, config={"temperature": 0.2}, tokens=(5000, 500), cost=1.0)
        # m2, a month later: no success in 3 runs, one of them with another vision range.
        for vision in (3, 3, 2):
            seed.experiment(
                "m2",
                "timed_out",
                actions=100,
                config={"temperature": 0.0, "visionRange": vision},
                started="2025-04-10 10:00+00",
            )
        ids["v2"] = seed.experiment(
            "m2",
            "timed_out",
            prompt="v2",
            actions=100,
            config={"temperature": 0.0, "visionRange": 3},
            started="2025-04-11 10:00+00",
        )
        # Scoring: a stalled agent is an agent failure, an abort censors the run. Settings that are not experimental
        # (the endpoint, the request timeout) or not the provider's (temperature for a baseline) never split groups.
        earlier = "2025-02-01 10:00+00"
        ids["stalled"] = seed.experiment(
            "quitter", "failed", reason="agent_stalled: 3 turns in a row without a valid action", started=earlier
        )
        seed.experiment("quitter", "succeeded", actions=5, started=earlier)
        seed.experiment("quitter", "aborted", reason="execution ABORTED: stopped", started=earlier)
        ids["baseline"] = seed.experiment(
            "explorer",
            "succeeded",
            provider="baseline",
            actions=5,
            started=earlier,
            config={"temperature": 1.5, "numCtx": 4096, "repeatPenalty": 1.0},
        )
        seed.experiment("explorer", "succeeded", provider="baseline", actions=5, started=earlier)
        for endpoint, timeout in (("http://gpu-a:11434", 60.0), ("http://gpu-b:11434", 300.0)):
            ids[endpoint] = seed.experiment(
                "remote",
                "succeeded",
                actions=5,
                started=earlier,
                config={"endpoint": endpoint, "requestTimeoutSeconds": timeout},
            )
        conn.close()
        yield url, ids


@pytest.fixture
def query(seeded):
    conn = db.connect(seeded[0])
    yield lambda sql, *args: conn.execute(sql, args).fetchall()
    conn.close()


def result(query, experiment_id: int) -> dict:
    [row] = query("SELECT * FROM experiment_results WHERE experiment_id = %s", experiment_id)
    return row


def group(rows: list[dict], model: str, **match) -> dict:
    [row] = [r for r in rows if r["model_name"] == model and all(r[k] == v for k, v in match.items())]
    return row


def test_one_row_per_experiment_counts_tiles_revisits_and_efficiency(query, seeded):
    walker = result(query, seeded[1]["walker"])
    assert (walker["actions"], walker["moves"], walker["failed_moves"], walker["recalls"]) == (9, 8, 1, 1)
    # stood on (0,0) (1,0) (2,0) (3,0) (3,1) (3,2); 7 successful moves entered 5 new tiles: 2 revisits
    assert walker["unique_tiles_visited"] == 6 and walker["revisits"] == 2
    # 8 moves, one into a wall: a path of 7 tiles, against the optimum 5 (never the move attempts)
    assert (walker["path_length"], walker["optimal_path_length"]) == (7, 5)
    assert float(walker["path_efficiency"]) == float(walker["spl"]) == round(5 / 7, 4)
    assert float(walker["mean_latency_ms"]) == 300.0 and walker["model_calls"] == 3  # (300 + 600) / 3 calls
    assert walker["goal_first_seen_step"] == 7 and walker["duration_seconds"] == 90.0
    assert walker["tags"] == ["sweep:alpha", "pilot"] and walker["sweep_id"] == "alpha"
    assert walker["maze"] == "test-corridor" and walker["maze_family"] == "handmade"


def test_the_start_counts_as_visited_once_and_open_runs_have_no_outcome_figures(query, seeded):
    one_step = result(query, seeded[1]["one-step"])
    assert one_step["unique_tiles_visited"] == 2 and one_step["revisits"] == 0
    assert one_step["path_efficiency"] is None  # timed out: efficiency is for successes only
    assert one_step["spl"] == 0  # an ended run without success weighs 0 in a mean SPL
    idle = result(query, seeded[1]["idle"])
    assert idle["unique_tiles_visited"] == 1 and idle["revisits"] == 0
    assert idle["duration_seconds"] is None and idle["mean_latency_ms"] is None and idle["tags"] == []
    assert idle["spl"] is None  # running


def test_varied_config_holds_only_the_keys_that_differ_and_never_the_seed(query, seeded):
    walker = result(query, seeded[1]["walker"])
    assert walker["varied_config"] == {"temperature": 0.7, "visionRange": 3}
    assert walker["config"]["seed"] != result(query, seeded[1]["one-step"])["config"]["seed"]


def test_an_export_and_a_report_compare_the_settings_of_the_experiments_they_select(seeded, query, tmp_path):
    """One definition of varied_config: the settings that differ among the experiments compared. The view compares
    every experiment of the database; an export compares those its filters select, as the report's groups do."""
    conn = db.connect(seeded[0])
    results = Results(conn)
    m2 = Filters(models=("m2",))
    with results.snapshot(), contextlib.closing(results.exported("experiments", m2)) as cursor:
        column = cursor.names.index("varied_config")
        exported = {row[0]: json.loads(row[column]) for batch in cursor.batches() for row in batch}
    compared = {e.experiment_id: e.compared_config for e in results.compared(m2)}
    conn.close()
    assert exported == compared
    assert sorted(exported.values(), key=str) == [{"visionRange": 2}] + [{"visionRange": 3}] * 3
    every = {r["experiment_id"]: r["varied_config"] for r in query("SELECT * FROM experiment_results")}
    assert all("temperature" in every[i] for i in exported)  # over the database, m1 and walker set it apart


@pytest.mark.parametrize(
    "successes, trials, low, high",
    [(8, 10, 0.4902, 0.9433), (0, 3, 0.0, 0.5615), (10, 10, 0.7225, 1.0), (0, 10, 0.0, 0.2775)],
)
def test_wilson_interval_matches_the_published_values(query, successes, trials, low, high):
    [row] = query(
        "SELECT wilson_lower(%s, %s) AS low, wilson_upper(%s, %s) AS high", successes, trials, successes, trials
    )
    assert row["low"] == pytest.approx(low, abs=5e-5) and row["high"] == pytest.approx(high, abs=5e-5)


def test_wilson_interval_of_no_trials_is_unknown(query):
    assert query("SELECT wilson_lower(0, 0) AS low, wilson_upper(0, 0) AS high") == [{"low": None, "high": None}]


def test_comparison_rates_medians_and_per_run_figures(query):
    m1 = group(query("SELECT * FROM agent_comparison"), "m1")
    assert (m1["runs"], m1["successes"], m1["errors"], m1["running"]) == (10, 8, 1, 1)
    assert float(m1["success_rate"]) == 0.8
    assert (float(m1["success_rate_low"]), float(m1["success_rate_high"])) == (0.4902, 0.9433)
    assert float(m1["median_actions_to_goal"]) == 15.0  # between 10 and 20
    assert float(m1["median_path_efficiency"]) == 0.375  # between 5/20 and 5/10
    # every run that ended spends: 10 runs of 1,100 tokens and 1 cent, the failed one 5,500 tokens and $1
    assert (m1["all_runs"], float(m1["success_rate_all"])) == (11, round(8 / 11, 4))
    assert float(m1["tokens"]) == 16_500 and float(m1["tokens_per_run"]) == 1500.0
    assert float(m1["tokens_per_success"]) == 2062.5
    assert float(m1["cost_usd"]) == 1.1 and float(m1["cost_per_run"]) == 0.1 and float(m1["cost_per_success"]) == 0.1375
    assert m1["config"] == {"temperature": 0.2, "visionRange": 3}


def test_an_agent_ending_is_a_run_without_success_and_a_stop_censors_the_run(query, seeded):
    assert result(query, seeded[1]["stalled"])["ending"] == "agent"
    [quitter] = query("SELECT * FROM compare_experiments(model => 'quitter')")
    assert (quitter["runs"], quitter["successes"], quitter["errors"], quitter["censored"]) == (2, 1, 0, 1)
    assert float(quitter["success_rate"]) == 0.5
    assert [
        (r["ending"], r["ending_cause"])
        for r in query(
            "SELECT ending, ending_cause FROM experiment_results WHERE model_name = 'quitter' ORDER BY experiment_id"
        )
    ] == [("agent", "stalled"), ("success", "goal"), ("censored", "stopped")]


def test_a_model_its_server_reported_two_builds_of_is_split_on_the_build(seeded):
    """The two "remote" runs ran on servers that reported other builds of one model name (a tag pulled again on one
    of them): the comparison splits them on modelBuild; one build on both, or none recorded, splits nothing."""
    conn = db.connect(seeded[0])
    ids = [seeded[1]["http://gpu-a:11434"], seeded[1]["http://gpu-b:11434"]]
    compared = "SELECT * FROM compare_experiments(model => 'remote') ORDER BY config::text"
    try:
        with conn.transaction(force_rollback=True):
            for build, number in zip(("sha256:aaa", "sha256:bbb"), ids, strict=True):
                conn.execute("UPDATE experiments SET model_build = %s WHERE id = %s", (build, number))
            split = conn.execute(compared).fetchall()
        with conn.transaction(force_rollback=True):
            conn.execute("UPDATE experiments SET model_build = 'sha256:aaa' WHERE id = ANY(%s)", (ids,))
            same = conn.execute(compared).fetchall()
    finally:
        conn.close()
    assert [(r["runs"], r["config"]) for r in split] == [
        (1, {"modelBuild": "sha256:aaa"}),
        (1, {"modelBuild": "sha256:bbb"}),
    ]
    assert [(r["runs"], r["config"]) for r in same] == [(2, {})]


def test_transport_and_other_providers_settings_never_split_a_comparison(query, seeded):
    baseline = result(query, seeded[1]["baseline"])
    assert baseline["varied_config"] == {"visionRange": 3}  # no temperature, numCtx or repeatPenalty
    remote = result(query, seeded[1]["http://gpu-a:11434"])
    assert "endpoint" not in remote["varied_config"] and "requestTimeoutSeconds" not in remote["varied_config"]
    [explorer] = query("SELECT * FROM compare_experiments(model => 'explorer')")
    assert (explorer["runs"], explorer["config"]) == (2, {})
    [one] = query("SELECT * FROM compare_experiments(model => 'remote')")
    assert (one["runs"], one["config"]) == (2, {})
    [per_experiment] = query("SELECT compared_config FROM comparison_scope(model => 'remote') GROUP BY 1")
    assert per_experiment["compared_config"] == {}


def test_comparison_keeps_settings_apart_and_filters_before_grouping(query):
    m2 = [r for r in query("SELECT * FROM agent_comparison") if r["model_name"] == "m2"]
    assert sorted((r["prompt_version"], r["config"]["visionRange"], r["runs"]) for r in m2) == [
        ("v1", 2, 1),
        ("v1", 3, 2),
        ("v2", 3, 1),
    ]
    assert group(m2, "m2", runs=2)["success_rate_high"] is not None
    # among m1's experiments alone nothing varies but the seed: one group, no config
    [m1] = query("SELECT * FROM compare_experiments(model => 'm1')")
    assert m1["config"] == {} and m1["runs"] == 10
    later = query("SELECT * FROM compare_experiments(since => '2025-04-01')")
    assert {r["model_name"] for r in later} == {"m2"}
    assert [r["model_name"] for r in query("SELECT * FROM compare_experiments(tag => 'sweep:alpha')")] == ["walker"]
    [per_maze] = query("SELECT * FROM compare_experiments(model => 'walker', by_maze => true)")
    assert per_maze["maze"] == "test-corridor" and per_maze["maze_family"] == "handmade"


@pytest.fixture
def report(seeded, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", seeded[0])
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))

    def invoke(*args):
        outcome = CliRunner().invoke(app, ["report", *args])
        assert outcome.exit_code == 0, outcome.output
        return outcome.stdout

    return invoke


def test_report_table_shows_each_group_with_its_interval(report, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # a terminal of 100 columns
    monkeypatch.setenv("COLUMNS", "100")
    narrow = report().splitlines()
    assert narrow[0].split()[:6] == ["agent", "prompt", "mazes", "config", "runs", "success"]
    assert max(map(len, narrow)) <= 100
    [m1] = [line for line in narrow if line.startswith("ollama/m1 ")]
    [key] = [line.split()[1].rstrip(":") for line in narrow if line.endswith(": temperature=0.2 visionRange=3")]
    # one maze: its Wilson intervals, both rates (a failed run among 11), the counts apart, the flags
    assert m1.split()[:11] == [
        "ollama/m1",
        "v1",
        "handmade",
        "4x3",
        key,
        "10",
        "80.0%",
        "(49.0-94.3)",
        "72.7%",
        "(43.4-90.2)",
        "0/1",
    ]
    assert m1.split()[-1] == "muc"  # one maze; 1 of 11 runs errored; agents and settings vary in the panel
    # the transport (server, request timeout) is not split on, and named where it differs between groups
    assert narrow[-7:-1] == [
        "confound: handmade 4x3: transport, not a condition: request timeouts differ (ollama/remote (v1) 300",
        "  s, 60 s; 9 groups 120 s)",
        "confound: handmade 4x3: besides the agent, the groups differ in prompt (v1, v2); temperature (0.0,",
        "  0.2, 0.7); visionRange (2, 3)",
        "confound: handmade 4x3: transport, not a condition: model servers differ (ollama/remote (v1)",
        "  http://gpu-a:11434, http://gpu-b:11434; 8 groups http://localhost:11434)",
    ]
    assert "95% CI: Wilson score interval over runs (the runs share no mazes, or all rest on one maze)" in narrow
    lines = report("--wide").splitlines()
    assert lines[0].split()[:7] == ["agent", "prompt", "family", "size", "mazes", "config", "runs"]
    [m1] = [line for line in lines if line.startswith("ollama/m1 ")]
    assert m1.split() == [
        "ollama/m1",
        "v1",
        "handmade",
        "4x3",
        "1",
        "temperature=0.2",
        "visionRange=3",
        "10",
        "8",
        "2",
        "0",
        "1",
        "80.0%",
        "-",
        "49.0%-94.3%",
        "11",
        "72.7%",
        "-",
        "43.4%-90.2%",
        "15",
        "15",
        "0.375",
        "0.380",  # SPL: (1 + 1 + .5 + .5 + .25 + .25 + .2 + .1) / 10 decided runs
        "0.345",  # SPL all: the same over all 11 runs that ended
        "1,500",
        "$0.1000",
        "$0.1375",
        "$1.1000",
        "m",
        "u",
        "c",
    ]
    assert lines[-1] == "(2 experiment(s) still running are not counted)"


def test_report_csv_and_json_carry_every_column(report):
    rows = list(csv.DictReader(io.StringIO(report("--format", "csv", "--model", "m1"))))
    assert len(rows) == 1 and rows[0]["success_rate_low"] == "0.4902" and json.loads(rows[0]["config"]) == {}
    data = json.loads(report("--format", "json", "--model", "m1"))
    assert data[0]["success_rate_high"] == 0.9433 and data[0]["runs"] == 10 and data[0]["prompt_hash"] == "hash-v1"


@pytest.mark.parametrize(
    "args, models",
    [
        (("--model", "m2"), {"m2"}),
        (("--prompt", "v2"), {"m2"}),
        (("--since", "2025-04-01"), {"m2"}),
        (("--until", "2025-04-01"), {"walker", "idle", "one-step", "m1", "quitter", "explorer", "remote"}),
        (("--tag", "pilot"), {"walker"}),
        (("--maze", "test-corridor"), {"walker", "idle", "one-step", "m1", "m2", "quitter", "explorer", "remote"}),
        (("--model", "m2", "--model", "walker", "--model", "m2"), {"m2", "walker"}),  # a union
        (("--model", "m2", "--model", "walker", "--prompt", "v2"), {"m2"}),  # filters intersect
        (("--agent", "ollama/m2", "--agent", "baseline/explorer"), {"m2", "explorer"}),
        (("--tag", "pilot", "--tag", "sweep:alpha"), {"walker"}),
    ],
)
def test_report_filters(report, args, models):
    assert {row["model_name"] for row in json.loads(report("--format", "json", *args))} == models


def test_report_by_maze_names_the_maze(report):
    lines = report("--by", "maze", "--model", "walker").splitlines()
    assert lines[0].split()[1] == "maze" and lines[1].split()[1] == "test-corridor"


@pytest.mark.parametrize("form", ["table", "csv", "json", "html"])
def test_a_filter_value_that_matches_nothing_is_refused_with_the_closest_values(seeded, monkeypatch, tmp_path, form):
    monkeypatch.setenv("DATABASE_URL", seeded[0])
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    for args, message in [
        (("--model", "m3"), "--model m3 matches no experiment (closest: m2, m1)"),
        (("--model", "m1", "--maze", "perfect"), "--maze perfect matches no experiment (known: "),
        (("--sweep", "alpah"), "--sweep alpah matches no experiment (closest: alpha)"),
        (("--model", "walker", "--prompt", "v2"), "no experiment is all of: model walker, prompt v2"),
    ]:
        refused = CliRunner().invoke(app, ["report", "--format", form, *args])
        assert refused.exit_code == 2 and refused.stdout == "", refused.output
        assert message in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr


def test_report_with_aws_reads_the_database_that_database_url_names(report, monkeypatch):
    assert {row["model_name"] for row in json.loads(report("--aws", "--format", "json", "--tag", "pilot"))} == {
        "walker"
    }
    monkeypatch.delenv("DATABASE_URL")
    refused = CliRunner().invoke(app, ["report", "--aws"])
    assert refused.exit_code == 2 and "set DATABASE_URL" in refused.stderr


def test_an_export_plans_its_cursors_for_every_row_and_only_inside_its_snapshot(seeded):
    """A cursor is planned for its first rows by default, which walked every action of the database in key order to
    send a sweep's first ones early (a 1,000-experiment sweep's actions: 623 ms of 40,000 experiments' instead of
    140); the export reads every row, so its cursors are planned for all of them, for its snapshot alone."""
    conn = db.connect(seeded[0])
    results = Results(conn)
    fraction = "SELECT current_setting('cursor_tuple_fraction') AS f"
    with results.snapshot(), contextlib.closing(results.exported("actions", Filters())):
        assert conn.execute(fraction).fetchone()["f"] == "1"
    assert conn.execute(fraction).fetchone()["f"] == "0.1"
    conn.close()
