"""The views made fast at lab scale (issue 33) answer exactly what their definitions before answered.

The definitions the issue changed (comparison_scope, experiment_results, and the comparison, compare_experiments and
agent_comparison, now read from the groups triggers keep: migration 0037), as main held them before the kinds
of experiment were kept by triggers (migration 0036), are read from the repository's history and made again in a
schema of their own, beside today's, on one database; the functions that use them find the old ones through the
search path, and the view bound to experiment_results (experiment_status) is made again beside it. A varied
fixture of experiments (four providers, settings that vary and snapshots that predate a key, sweeps with a retried
repetition, every ending, running and unpriced runs, a replay) changed the ways a lab changes it (experiments
inserted one by one and in bulk, running ones ended as the finalizer ends them, a retried repetition's attempt
ended, archived, brought back, deleted, a setting that starts to vary, a configuration key no longer compared, a
maze renamed into another family, a sweep archived in one statement, every experiment truncated). After each change,
every view and comparison is read both ways and must be the same, row for row.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from oriole.config import resolve
from oriole.store import Store, db
from tests.conftest import scratch_database

ROOT = Path(__file__).resolve().parents[2]
BEFORE = "90fdeee"  # main before migration 0036
# made from the history, in this order (a view binds to the functions there when made); the rest from today's files
CHANGED = ("comparison_scope", "experiment_results", "compared_runs", "compare_experiments", "agent_comparison")
BOUND = ("experiment_status",)  # a view bound to experiment_results when made: made again beside the old one
QUERIES = (
    "SELECT * FROM experiment_results ORDER BY experiment_id",
    "SELECT * FROM experiment_status ORDER BY experiment_id",
    "SELECT * FROM agent_comparison",
    "SELECT * FROM compare_experiments(by_maze => true)",
    "SELECT * FROM compare_experiments(tag => 'sweep:s1')",
    "SELECT * FROM compare_experiments(model => 'qwen')",
    "SELECT * FROM compare_experiments(experiments => ARRAY(SELECT id FROM chosen_experiments(sweeps => '{s2}')))",
    "SELECT * FROM comparison_scope() ORDER BY experiment_id",
    "SELECT * FROM comparison_scope(maze => 'perfect') ORDER BY experiment_id",
)
# provider, model, settings (beyond the catalog's), ending, priced
AGENTS = (
    ("baseline", "random", {}, "success", True),
    ("ollama", "qwen", {"temperature": 0.0}, "agent", True),
    ("ollama", "qwen", {"temperature": 0.7}, "censored", False),
    ("bedrock", "nova", {"maxMoves": 60}, "error", True),
    ("openai", "gpt", {"visionRange": 5}, None, False),
)


def definitions_before(name: str) -> str:
    try:
        return subprocess.run(
            ["git", "show", f"{BEFORE}:migrations/views/{name}.sql"], cwd=ROOT, check=True, capture_output=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"the comparison reads the views of commit {BEFORE} from the repository's history")


@pytest.fixture(scope="module")
def database(server_url, migrated_template) -> Iterator[str]:
    with scratch_database(server_url, migrated_template) as url:
        store = Store(db.connect(url))
        with store.conn.transaction():
            store.conn.execute("CREATE SCHEMA before_kinds")
            store.conn.execute("SET LOCAL search_path TO before_kinds, public")
            for name in CHANGED:
                store.conn.execute(definitions_before(name))
            for name in BOUND:
                store.conn.execute((ROOT / "migrations" / "views" / f"{name}.sql").read_text(encoding="utf-8"))
        store.conn.execute("INSERT INTO sweeps (id, planned, run_input) VALUES ('s1', 1, '{}'), ('s2', 1, '{}')")
        store.conn.close()
        yield url


def insert(conn, count: int, start: int, sweep: str | None = None) -> list[int]:
    """``count`` experiments, one statement, cycling through AGENTS and the first mazes; a sweep's repeat its
    agent ids, so that later ones are retried attempts of earlier repetitions."""
    mazes = [r["id"] for r in conn.execute("SELECT id FROM mazes ORDER BY id LIMIT 4")]
    rows = []
    for n, ((provider, model, settings, ending, priced), maze) in zip(
        range(start, start + count), itertools.cycle(itertools.product(AGENTS, mazes))
    ):
        config = {**resolve({}, settings, provider), "seed": n}
        if n % 7 == 0:
            config.pop("maxStalledTurns", None)  # a snapshot from before the key: its default applies
        status = {"success": "succeeded", "agent": "timed_out", "censored": "timed_out", "error": "failed"}
        rows.append(
            {
                "maze": maze,
                "provider": provider,
                "model": model,
                "config": Jsonb(config),
                "seed": n,
                "status": status.get(ending or "", "running"),
                "ending": ending,
                "cause": {"success": "goal", "agent": "max_moves", "censored": "max_duration", "error": "provider"}.get(
                    ending or ""
                ),
                "actions": 10 + n % 13,
                "tokens": 0 if provider == "baseline" else 100 * n,
                "cost": (0.001 * n if priced else None) if provider != "baseline" else 0,
                "sweep": sweep,
                "agent_id": f"{sweep}/{model}-{maze}/r{n % 3}" if sweep else None,
                "comment": f"sweep:{sweep}" if sweep else "single",
                "arn": f"arn:kinds:{n}",
            }
        )
    return [
        r["id"]
        for r in conn.execute(
            """
            INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text,
                agent_id, comment, config, seed, status, ending, ending_cause, goal_found, current_x, current_y,
                action_count, move_count, failed_move_count, input_tokens, output_tokens, cost_usd, completed_at,
                failure_reason, origin_execution_arn, execution_arns, optimal_path_length, sweep_id)
            SELECT r.maze, r.provider, r.model, 'v1', 'h', 't', r.agent_id, r.comment, r.config, r.seed, r.status,
                   r.ending, r.cause, r.ending IS NOT DISTINCT FROM 'success', 0, 0, r.actions, r.actions - 2, 1,
                   r.tokens, r.tokens / 10, r.cost, CASE WHEN r.ending IS NOT NULL THEN now() END,
                   CASE WHEN r.status NOT IN ('running', 'succeeded') THEN r.cause || ' reached' END, r.arn,
                   ARRAY[r.arn], 6, r.sweep
              FROM jsonb_to_recordset(%s) AS r (maze int, provider text, model text, config jsonb, seed bigint,
                   status text, ending text, cause text, actions int, tokens bigint, cost numeric, sweep text,
                   agent_id text, comment text, arn text)
            RETURNING id
            """,
            (Jsonb([{**r, "config": r["config"].obj} for r in rows]),),
        )
    ]


def answers(url: str, schema: str) -> dict[str, list[dict]]:
    conn = db.connect(url)
    try:
        conn.execute(f"SET search_path TO {schema}")
        return {query: conn.execute(query).fetchall() for query in QUERIES}
    finally:
        conn.close()


def same_both_ways(url: str) -> None:
    today, before = answers(url, "public"), answers(url, "before_kinds, public")
    for query in QUERIES:
        assert len(today[query]) == len(before[query]), query
        for now, then in zip(today[query], before[query], strict=True):
            assert then.keys() <= now.keys(), query  # a column added since is no difference of this issue's
            assert all(now[k] == then[k] for k in then), (
                query,
                {k: (now[k], then[k]) for k in then if now[k] != then[k]},
            )
    assert any(r["varied_config"] for r in today[QUERIES[0]])  # the fixture varies settings
    assert len(today["SELECT * FROM agent_comparison"]) > 4


def test_the_views_answer_as_before_through_every_change_a_lab_makes(database):
    conn = db.connect(database)
    ids = insert(conn, 30, 1, sweep="s1")  # one statement: the kinds counted in bulk
    for n in range(31, 41):  # one by one, as StartExperiment inserts them
        ids += insert(conn, 1, n, sweep="s2" if n % 2 else None)
    conn.execute(
        "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
        "config, seed, status, current_x, current_y, origin_execution_arn, execution_arns, replay_of, "
        "optimal_path_length) "
        "SELECT maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
        "config || '{\"temperature\": 1.5}', seed, 'running', 0, 0, 'arn:replay', ARRAY['arn:replay'], id, 6 "
        "FROM experiments WHERE id = %s",
        (ids[1],),
    )
    same_both_ways(database)

    # ended as the finalizer ends them, one statement each: the running gpt runs, then a running retry of a sweep's
    # repetition (which attempt counts changes)
    running = [r["id"] for r in conn.execute("SELECT id FROM experiments WHERE ending IS NULL AND replay_of IS NULL")]
    retry = insert(conn, 1, 100, sweep="s1")[0]  # s1's random r1 on the first maze, attempted again
    conn.execute(
        "UPDATE experiments SET ending = NULL, status = 'running', ending_cause = NULL, completed_at = NULL, "
        "failure_reason = NULL, goal_found = false WHERE id = %s",
        (retry,),
    )
    same_both_ways(database)
    for one in [*running[:3], retry]:
        conn.execute(
            "UPDATE experiments SET status = 'succeeded', ending = 'success', ending_cause = 'goal', "
            "goal_found = true, completed_at = now() WHERE id = %s",
            (one,),
        )
        same_both_ways(database)
    # a setting that starts to vary: every group's compared configuration is another
    insert(conn, 2, 41, sweep=None)
    conn.execute(
        "UPDATE experiments SET config = config || '{\"visionRange\": 2}' WHERE id = (SELECT max(id) FROM experiments)"
    )
    same_both_ways(database)

    # archived: the only experiments with visionRange 5 leave the comparisons, and with them that varied setting
    gpt = [r["id"] for r in conn.execute("SELECT id FROM experiments WHERE model_name = 'gpt' AND replay_of IS NULL")]
    conn.execute("UPDATE experiments SET archived_at = now() WHERE id = ANY (%s)", (gpt,))
    same_both_ways(database)
    conn.execute("UPDATE experiments SET archived_at = NULL WHERE id = %s", (gpt[0],))  # one brought back
    same_both_ways(database)

    # deleted: every 60-move nova run but one, in one statement
    nova = [r["id"] for r in conn.execute("SELECT id FROM experiments WHERE model_name = 'nova' ORDER BY id")]
    conn.execute("DELETE FROM experiments WHERE id = ANY (%s)", (nova[1:],))
    same_both_ways(database)

    # a snapshot rewritten (an import's fix), and a key no longer compared
    conn.execute("UPDATE experiments SET config = config || '{\"maxMoves\": 61}' WHERE id = %s", (nova[0],))
    same_both_ways(database)
    conn.execute("UPDATE config_keys SET experimental = false WHERE key = 'temperature'")
    same_both_ways(database)
    counted = conn.execute("SELECT coalesce(sum(experiments), 0) AS n FROM experiment_kinds").fetchone()["n"]
    live = conn.execute(
        "SELECT count(*) AS n FROM experiments WHERE replay_of IS NULL AND archived_at IS NULL"
    ).fetchone()["n"]
    assert counted == live

    # a maze the experiments ran on renamed into another family (what names and counts a group), then a sweep
    # archived in one statement, then every experiment gone at once
    conn.execute(
        "UPDATE mazes SET name = name || '-renamed', family = 'renamed' "
        "WHERE id = (SELECT min(maze_id) FROM experiments)"
    )
    same_both_ways(database)
    conn.execute("UPDATE experiments SET archived_at = now() WHERE sweep_id = 's2'")
    same_both_ways(database)
    conn.execute("TRUNCATE experiments CASCADE")
    assert conn.execute("SELECT count(*) AS n FROM comparison_groups").fetchone()["n"] == 0
    assert conn.execute("SELECT coalesce(sum(experiments), 0) AS n FROM experiment_kinds").fetchone()["n"] == 0
    conn.close()


def test_finalizers_of_different_agents_do_not_wait_for_one_another_and_those_of_one_agent_do(database):
    """Ending a run works its agent's groups out again under a lock of those groups alone: a finalizer of another
    agent goes ahead while the first has not committed; one of the same agent waits for it, then counts its run."""
    ended = (
        "UPDATE experiments SET status = 'succeeded', ending = 'success', ending_cause = 'goal', goal_found = true, "
        "failure_reason = NULL, completed_at = now() WHERE id = %s"
    )
    first, second, third = db.connect(database), db.connect(database), db.connect(database)
    cycle = 4 * len(AGENTS)  # insert() cycles through the agents on four mazes
    ids = insert(first, cycle + 1, 700)
    first.execute(
        "UPDATE experiments SET status = 'running', ending = NULL, ending_cause = NULL, completed_at = NULL, "
        "failure_reason = NULL, goal_found = false WHERE id = ANY (%s)",
        (ids,),
    )
    random, qwen, other_random = ids[0], ids[4], ids[cycle]  # the last: random again, on the same maze
    try:
        with first.transaction():
            first.execute(ended, (random,))
            second.execute("SET lock_timeout = '5s'")
            second.execute(ended, (qwen,))  # another agent: no wait (a wait would raise after 5 s)
            third.execute("SET lock_timeout = '200ms'")
            with pytest.raises(psycopg.errors.LockNotAvailable):
                third.execute(ended, (other_random,))  # the same agent: waits for the first finalizer
        third.execute(ended, (other_random,))
        same_both_ways(database)
    finally:
        for conn in (first, second, third):
            conn.close()


def test_the_turn_write_leaves_the_kinds_alone_and_an_archive_moves_them(database):
    """The turn's write sets counters, never what makes a kind: no kind is written in its transaction."""
    conn = db.connect(database)
    one = insert(conn, 1, 500)[0]
    written = "SELECT count(*) AS n FROM experiment_kinds WHERE xmin::text = pg_current_xact_id()::text"
    with conn.transaction(force_rollback=True):
        conn.execute(
            "UPDATE experiments SET action_count = action_count + 1, turn_count = turn_count + 1, "
            "input_tokens = input_tokens + 5 WHERE id = %s",
            (one,),
        )
        assert conn.execute(written).fetchone()["n"] == 0
    with conn.transaction(force_rollback=True):
        conn.execute("UPDATE experiments SET archived_at = now() WHERE id = %s", (one,))
        assert conn.execute(written).fetchone()["n"] == 1
    conn.close()
