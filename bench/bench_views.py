"""Benchmark: the analysis views on 10,000,000 actions.

Creates a scratch database on the local server (``DATABASE_URL``'s server, else the embedded one),
migrates it, seeds experiments, turns and actions in SQL (``INSERT ... SELECT generate_series``), sets the
per-experiment aggregates from the raw rows (``recount_experiments()``, what migration 0005 does to a stored
database), runs ``VACUUM ANALYZE`` (what autovacuum does on a live database) and times each view query: the
whole comparison, filtered comparisons, the per-experiment view whole, filtered on a model and on one
experiment, and the live status, each streamed as a client reads it (on the project's connection, ``db.connect``,
with its JSON decoder; the client's CPU beside the wall); then writes under the triggers that keep the
comparison (a finalizer's statement, a sweep archived, a sweep deleted: each rolled back) and the researcher's
commands on one sweep (``oriole ls``, ``report``, ``report --format html``, ``export``). The database is dropped at
the end. The views read the aggregates the turn's
write keeps, never the actions, so they scale with the experiments: agent_comparison and
compare_experiments(...) answer in under 200 ms. Run with ``python bench/bench_views.py``
(``--experiments 4000 --actions 2500`` by default; ``--keep`` prints the URL instead of dropping the database;
``--record`` keeps the figures in ``bench/results.json``; ``--database URL`` times a database ``--keep`` left, without
seeding it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import psycopg
import results_file
from psycopg import sql
from psycopg.rows import tuple_row

from oriole.store import db
from oriole_workstation.database import local_url, prepare

MODELS = (
    ("baseline", "random"),
    ("baseline", "explorer"),
    ("baseline", "wall-follower"),
    ("baseline", "oracle"),
    ("ollama", "qwen2.5:7b"),
    ("ollama", "llama3.1:8b"),
    ("bedrock", "anthropic.claude-3-5-haiku"),
    ("bedrock", "amazon.nova-lite"),
)

SWEEP = "bench-3"  # one sweep of the seeded 40: experiments / 40 of them (1,000 of 40,000)
ORIOLE = os.path.join(os.path.dirname(sys.executable), "oriole")  # the CLI installed beside this interpreter

QUERIES = {
    "agent_comparison (all)": "SELECT * FROM agent_comparison",
    "compare_experiments(tag => one sweep)": "SELECT * FROM compare_experiments(tag => 'sweep:bench-3')",
    "compare_experiments(by_maze => true)": "SELECT * FROM compare_experiments(by_maze => true)",
    "report --sweep one --sweep another": "SELECT * FROM compare_experiments(experiments => ARRAY(SELECT id FROM "
    "chosen_experiments(sweeps => ARRAY['bench-3', 'bench-4'])))",
    "experiment_results (all rows)": "SELECT * FROM experiment_results",
    "experiment_results WHERE model_name = ...": "SELECT * FROM experiment_results WHERE model_name = 'qwen2.5:7b'",
    "experiment_results WHERE experiment_id = ...": "SELECT * FROM experiment_results WHERE experiment_id = 1234",
    "experiment_status WHERE status = 'running'": "SELECT * FROM experiment_status WHERE status = 'running'",
}

# Writes under the triggers that keep the kinds and the comparison's groups, each in a transaction rolled back
WRITES = {
    "end one experiment (a finalizer's statement)": "UPDATE experiments SET status = 'timed_out', ending = 'agent', "
    "ending_cause = 'max_moves', goal_found = false, goal_reached_step = NULL, failure_reason = 'max_moves reached' "
    "WHERE id = 1235",
    f"archive a sweep ({SWEEP}, one statement)": (
        f"UPDATE experiments SET archived_at = now() WHERE sweep_id = '{SWEEP}'"
    ),
    f"delete a sweep ({SWEEP}, its turns and actions)": f"DELETE FROM experiments WHERE sweep_id = '{SWEEP}'",
}

SEED_SQL = """
SELECT setseed(0.42);
CREATE TEMP TABLE plan AS
SELECT g AS n, (g - 1) %% %(models)s AS model, m.id AS maze_id, m.width, m.height, m.start_x, m.start_y,
       m.shortest_path_length
  FROM generate_series(1, %(experiments)s) g
  JOIN LATERAL (SELECT * FROM mazes ORDER BY id OFFSET (g %% (SELECT count(*) FROM mazes)) LIMIT 1) m ON true;

INSERT INTO sweeps (id, planned, run_input)
SELECT 'bench-' || g, %(experiments)s / 40, '{}'::jsonb FROM generate_series(0, 39) g;

INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, agent_id,
                         sweep_id, comment, config, seed, status, ending, ending_cause, goal_found,
                         goal_first_seen_step, goal_reached_step, current_x, current_y, action_count, move_count,
                         failed_move_count, turn_count, input_tokens, output_tokens, cost_usd, started_at,
                         completed_at, failure_reason, origin_execution_arn, execution_arns, optimal_path_length)
SELECT p.maze_id, (%(providers)s::text[])[p.model + 1], (%(names)s::text[])[p.model + 1],
       'v' || (1 + p.n %% 2), md5('prompt' || (1 + p.n %% 2)), 'prompt text',
       'bench-' || (p.n %% 40) || '/' || md5(p.n::text) || '/r1', 'bench-' || (p.n %% 40),
       'sweep:bench-' || (p.n %% 40),
       jsonb_build_object('maxMoves', 10000, 'maxActionsPerTurn', 8, 'visionRange', 3, 'goalCondition', 'reach',
                          'temperature', CASE WHEN p.n %% 3 = 0 THEN 0.0 ELSE 0.2 END, 'seed', p.n,
                          'historyActions', 20, 'maxRecallActions', 50, 'recallInterval', 10),
       p.n, CASE WHEN p.n %% 5 < 3 THEN 'succeeded' WHEN p.n %% 5 = 3 THEN 'timed_out' ELSE 'failed' END,
       CASE WHEN p.n %% 5 < 3 THEN 'success' WHEN p.n %% 5 = 3 THEN 'agent' ELSE 'error' END,
       CASE WHEN p.n %% 5 < 3 THEN 'goal' WHEN p.n %% 5 = 3 THEN 'max_moves' ELSE 'provider' END,
       p.n %% 5 < 3, CASE WHEN p.n %% 5 < 3 THEN %(actions)s - 9 END, CASE WHEN p.n %% 5 < 3 THEN %(actions)s END,
       p.start_x, p.start_y, %(actions)s, %(actions)s - 10, %(actions)s / 5, %(turns)s,
       CASE WHEN p.model >= 4 THEN %(actions)s * 900 ELSE 0 END,
       CASE WHEN p.model >= 4 THEN %(actions)s * 40 ELSE 0 END,
       CASE WHEN p.model >= 6 THEN %(actions)s * 0.0009 ELSE 0 END,
       now() - make_interval(hours => p.n), now() - make_interval(hours => p.n) + interval '3 minutes',
       CASE WHEN p.n %% 5 = 3 THEN 'max_moves reached' WHEN p.n %% 5 = 4 THEN 'ModelUnavailable: bench' END,
       'arn:bench:' || p.n, ARRAY['arn:bench:' || p.n], p.shortest_path_length
  FROM plan p ORDER BY p.n;

INSERT INTO turns (experiment_id, turn_number, first_step, action_count, model_calls, input_tokens, output_tokens,
                   cost_usd, latency_ms, end_reason, started_at)
SELECT e.id, t, (t - 1) * 8 + 1, 8, CASE WHEN e.llm_provider = 'baseline' THEN 0 ELSE 2 END,
       e.input_tokens / %(turns)s, e.output_tokens / %(turns)s, 0,
       CASE WHEN e.llm_provider = 'baseline' THEN 0 ELSE 800 + (random() * 400)::int END, 'action_budget', e.started_at
  FROM experiments e CROSS JOIN generate_series(1, %(turns)s) t;

INSERT INTO actions (experiment_id, step_number, turn_number, action_type, tool_name, reasoning, from_x, from_y,
                     to_x, to_y, success, tiles_seen, goal_visible)
SELECT e.id, s, (s - 1) / 8 + 1, 'move_east', 'move_east',
       CASE WHEN e.llm_provider <> 'baseline' THEN 'The corridor to the east is open; follow it.' END,
       0, 0, (random() * least(m.width - 1, 11))::int, (random() * least(m.height - 1, 11))::int, random() > 0.2,
       '[[4,3,0],[4,2,0],[4,1,1],[5,3,0],[6,3,0],[7,3,1],[4,4,0],[4,5,1],[3,3,0],[2,3,1]]'::jsonb, false
  FROM experiments e JOIN mazes m ON m.id = e.maze_id CROSS JOIN generate_series(1, %(actions)s) s;
"""


def _with_database(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


def seed(conn: psycopg.Connection, experiments: int, actions: int) -> dict[str, float]:
    """Seed the tables, recount the aggregates and analyse; the seconds each stage took."""
    seconds = {}
    started = time.perf_counter()
    # several statements with parameters: bound on the client, sent as one script
    psycopg.ClientCursor(conn).execute(
        SEED_SQL,
        {
            "experiments": experiments,
            "actions": actions,
            "turns": -(-actions // 8),
            "models": len(MODELS),
            "providers": [p for p, _ in MODELS],
            "names": [n for _, n in MODELS],
        },
    )
    seconds["seed_seconds"] = time.perf_counter() - started
    for stage, statement in (
        ("recount_seconds", "SELECT recount_experiments()"),
        ("vacuum_analyze_seconds", "VACUUM ANALYZE"),
    ):
        started = time.perf_counter()
        conn.execute(statement)
        seconds[stage] = time.perf_counter() - started
    return {stage: round(value, 1) for stage, value in seconds.items()}


def time_queries(conn: psycopg.Connection, repeats: int) -> dict[str, dict]:
    """Each query's wall time as a client streams it (``Cursor.stream``: every row decoded by psycopg, JSON
    included, none kept) on the project's connection (``db.connect``: its JSON decoder), the client's CPU time (which
    the load changes little), beside the server's own (``EXPLAIN ANALYZE``)."""
    figures = {}
    for label, query in QUERIES.items():
        walls, cpus = [], []
        for _ in range(repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            rows = sum(1 for _ in conn.cursor().stream(query))
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu_started)
        plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query).fetchone()[0][0]
        figures[label] = {
            "rows": rows,
            "median_ms": round(statistics.median(walls) * 1000, 1),
            "min_ms": round(min(walls) * 1000, 1),
            "client_cpu_ms": round(statistics.median(cpus) * 1000, 1),
            "explain_ms": round(plan["Execution Time"], 1),
        }
    return figures


def time_writes(conn: psycopg.Connection, repeats: int) -> dict[str, dict]:
    """Each write's wall time, its triggers included, in a transaction rolled back (the database is left as it was)."""
    figures = {}
    for label, statement in WRITES.items():
        walls = []
        for _ in range(repeats):
            with conn.transaction(force_rollback=True):
                started = time.perf_counter()
                rows = conn.execute(statement).rowcount
                walls.append(time.perf_counter() - started)
        figures[label] = {
            "rows": rows,
            "median_ms": round(statistics.median(walls) * 1000, 1),
            "min_ms": round(min(walls) * 1000, 1),
        }
    return figures


def commands(sweep: str) -> dict[str, list[str]]:
    """The researcher's commands on one sweep (``oriole ls``, ``report`` in the terminal and as HTML, ``export``)."""
    return {
        f"oriole ls --sweep {sweep} --limit 0": ["ls", "--sweep", sweep, "--limit", "0"],
        f"oriole report --sweep {sweep}": ["report", "--sweep", sweep],
        f"oriole report --sweep {sweep} --format html": [
            "report",
            "--sweep",
            sweep,
            "--format",
            "html",
            "-o",
            "r.html",
        ],
        f"oriole export --sweep {sweep} --format csv": ["export", "--sweep", sweep, "--format", "csv", "-o", "out"],
    }


def _children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def time_commands(url: str, sweep: str, repeats: int) -> dict[str, dict]:
    """Each command's wall time, as the researcher waits for it (a fresh process: interpreter start included), its
    modules compiled once as an installed package's are (``pip install`` compiles them; a first run untimed, the
    bytecode kept in a scratch folder whatever ``PYTHONDONTWRITEBYTECODE`` says)."""
    figures = {}
    with tempfile.TemporaryDirectory() as home:
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        environment |= {
            "DATABASE_URL": url,
            "ORIOLE_HOME": home,
            "COLUMNS": "120",
            "PYTHONPYCACHEPREFIX": os.path.join(home, "bytecode"),
        }
        for label, arguments in commands(sweep).items():
            walls, cpus = [], []
            subprocess.run([ORIOLE, *arguments], cwd=home, env=environment, check=True, capture_output=True)
            for _ in range(repeats):
                shutil.rmtree(os.path.join(home, "out"), ignore_errors=True)
                used = _children_cpu()
                started = time.perf_counter()
                subprocess.run([ORIOLE, *arguments], cwd=home, env=environment, check=True, capture_output=True)
                walls.append(time.perf_counter() - started)
                cpus.append(_children_cpu() - used)
            figures[label] = {
                "median_ms": round(statistics.median(walls) * 1000),
                "min_ms": round(min(walls) * 1000),
                "cpu_ms": round(statistics.median(cpus) * 1000),  # the command's own CPU: the load changes it little
            }
    return figures


def _project_connection(url: str) -> psycopg.Connection:
    """The connection the project's commands read through (``db.connect``: autocommit, its JSON decoder), its rows
    as tuples."""
    conn = db.connect(url)
    conn.row_factory = tuple_row
    return conn


def measure(url: str, experiments: int, actions: int, repeats: int, seeded: bool = False) -> dict:
    """Migrate and seed the database at ``url`` (unless ``seeded``: a database this benchmark seeded and kept,
    migrated again), then time the queries on it."""
    prepare(url).conn.close()
    with _project_connection(url) as conn:
        seconds = {} if seeded else seed(conn, experiments, actions)
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM experiments), (SELECT count(*) FROM turns), "
            "(SELECT count(*) FROM actions), "
            "pg_size_pretty(pg_database_size(current_database()))"
        ).fetchone()
        return {
            "experiments": counts[0],
            "turns": counts[1],
            "actions": counts[2],
            "database_size": counts[3],
            **seconds,
            "queries": time_queries(conn, repeats),
            "writes": time_writes(conn, min(repeats, 3)),
            "commands": time_commands(url, SWEEP, min(repeats, 3)),
        }


def run(experiments: int, actions: int, repeats: int, keep: bool = False, database: str | None = None) -> dict:
    """The figures on a scratch database, dropped afterwards unless ``keep`` (then its URL is in the figures), or on
    ``database``, one kept by an earlier run (left as it is)."""
    if database:
        return measure(database, experiments, actions, repeats, seeded=True) | {"kept_database": database}
    server = local_url()
    name = f"oriole_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = _with_database(server, name)
    try:
        figures = measure(url, experiments, actions, repeats)
    finally:
        if not keep:
            with psycopg.connect(server, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
    return figures | {"kept_database": url if keep else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=4000)
    parser.add_argument("--actions", type=int, default=2500, help="actions per experiment")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the seeded database and print its URL")
    parser.add_argument("--record", action="store_true", help="keep the figures in bench/results.json")
    parser.add_argument(
        "--database",
        metavar="URL",
        help="time the queries on a database an earlier run kept (--keep printed its URL) instead of seeding one",
    )
    args = parser.parse_args()
    figures = run(args.experiments, args.actions, args.repeats, args.keep, args.database)
    with psycopg.connect(local_url()) as conn:
        where = results_file.environment(conn)
    if args.record:
        kept = {key: value for key, value in figures.items() if key != "kept_database"}
        results_file.record(f"views at {args.experiments:,} experiments", kept, where)
    if args.json:
        print(json.dumps(figures | where))
        return
    for key in (
        "experiments",
        "turns",
        "actions",
        "database_size",
        "seed_seconds",
        "recount_seconds",
        "vacuum_analyze_seconds",
    ):
        print(f"{key:<46}{figures.get(key, '-')}")
    print(f"{'query':<46}{'rows':>6}{'median ms':>11}{'min ms':>9}{'CPU ms':>9}{'EXPLAIN ANALYZE ms':>20}")
    for label, f in figures["queries"].items():
        print(
            f"{label:<46}{f['rows']:>6}{f['median_ms']:>11}{f['min_ms']:>9}{f['client_cpu_ms']:>9}{f['explain_ms']:>20}"
        )
    print(f"{'write':<52}{'rows':>6}{'median ms':>11}{'min ms':>9}")
    for label, f in figures["writes"].items():
        print(f"{label:<52}{f['rows']:>6}{f['median_ms']:>11}{f['min_ms']:>9}")
    print(f"{'command':<52}{'median ms':>11}{'min ms':>9}{'CPU ms':>9}")
    for label, f in figures["commands"].items():
        print(f"{label:<52}{f['median_ms']:>11}{f['min_ms']:>9}{f['cpu_ms']:>9}")
    for key, value in where.items():
        print(f"{key:<46}{value}")
    if figures["kept_database"]:
        print(f"{'kept database':<46}{figures['kept_database']}")


if __name__ == "__main__":
    main()
