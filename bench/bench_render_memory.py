"""Benchmark: the memory ``oriole render`` takes to draw a long run (issue 37's budget).

A run of many actions is seeded by SQL, not played: a baseline run through the real local state machine, whose
actions and turns are then replaced by ``--actions`` actions on perfect-7 (each cycle of three: a wall hit, south,
north; every thousandth action with some reasoning). ``oriole render`` draws its four files (PNG, SVG, GIF, HTML)
in a process of its own, and the rise of that process's peak resident memory above what it held before the command
(Linux ``VmHWM``, reset through ``clear_refs``) is compared with drawing a three-action run's: the budget is
``render.MEMORY_BASE_BYTES`` plus ``render.MEMORY_PER_ACTION_BYTES`` an action. Run with ``make bench`` or
``python bench/bench_render_memory.py`` (``--actions 200000`` by default, repeatable: ``--actions 200000 --actions
1000000``); ``--record`` keeps the figures in ``bench/results.json``. ``make test`` checks the same budget, and the
slope between two smaller runs, with this module's functions (``tests/integration/test_render_long.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PER_TURN = 50
# perfect-7 from its start (1, 1): north is a wall, south is open. Each cycle of three: a wall hit, south, north.
TURNS_SQL = """
INSERT INTO turns (experiment_id, turn_number, first_step, action_count, end_reason, started_at)
SELECT %(id)s, t, (t - 1) * %(per_turn)s + 1, %(per_turn)s, 'action_budget', now()
  FROM generate_series(1, %(n)s / %(per_turn)s) t
"""
ACTIONS_SQL = """
INSERT INTO actions (experiment_id, step_number, turn_number, action_type, reasoning, from_x, from_y, to_x, to_y,
                     success, error, tiles_seen)
SELECT %(id)s, k, (k - 1) / %(per_turn)s + 1,
       CASE k %% 3 WHEN 1 THEN 'move_north' WHEN 2 THEN 'move_south' ELSE 'move_north' END,
       CASE WHEN k %% 1000 = 0 THEN 'thinking about step ' || k END,
       1, CASE k %% 3 WHEN 0 THEN 2 ELSE 1 END,
       1, CASE k %% 3 WHEN 2 THEN 2 ELSE 1 END,
       k %% 3 <> 1, CASE WHEN k %% 3 = 1 THEN 'cannot move north: wall at the target tile' END,
       '[[1, 1, 0], [1, 2, 0], [1, 3, 0], [0, 1, 1], [2, 1, 1], [1, 0, 1]]'::jsonb
  FROM generate_series(1, %(n)s) k
"""
PEAK = """
import sys
from oriole_workstation.command import main

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))

before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as refs:
    refs.write("5")  # the peak (VmHWM) starts again from here: what the command itself adds
try:
    main()
finally:
    sys.stderr.write(f"\\npeak-rss-kib {status('VmHWM') - before}\\n")
"""
LONG_RUN = {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "wall-follower"}
SHORT_RUN = {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "oracle", "config": {"maxMoves": 3}}


def lengthen(conn: Any, experiment: int, actions: int) -> None:
    """Replace a stored run's turns and actions by ``actions`` seeded ones (a multiple of ``PER_TURN``), and its
    counts with them."""
    conn.execute("DELETE FROM actions WHERE experiment_id = %s", (experiment,))
    conn.execute("DELETE FROM turns WHERE experiment_id = %s", (experiment,))
    params = {"id": experiment, "n": actions, "per_turn": PER_TURN}
    conn.execute(TURNS_SQL, params)
    conn.execute(ACTIONS_SQL, params)
    conn.execute(
        "UPDATE experiments SET action_count = %s, turn_count = %s, goal_first_seen_step = NULL WHERE id = %s",
        (actions, actions // PER_TURN, experiment),
    )


def drawn(database_url: str, home: Path, *args: str) -> tuple[int, str]:
    """``oriole render ARGS`` in a process of its own: how far its resident memory rose above what the process held
    before the command ran (KiB), and what it printed."""
    env = {**os.environ, "DATABASE_URL": database_url, "ORIOLE_HOME": str(home), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, "render", *args], env=env, capture_output=True, text=True, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(f"oriole render {' '.join(args)} failed:\n{done.stderr}")
    peak = int(done.stderr.rsplit("peak-rss-kib ", 1)[1].split()[0])
    return peak, done.stdout


def every_format(folder: Path, name: str) -> list[str]:
    """``oriole render`` options writing a run's four files into ``folder``."""
    return [f"-o{folder / name}.{suffix}" for suffix in ("html", "svg", "png", "gif")]


def measure(database_url: str, sizes: list[int], folder: Path) -> dict[str, Any]:
    """Draw a three-action run, then a run of each of ``sizes`` actions: the peak growth of each, per action above
    the three-action run's, and the budget it is held to."""
    from oriole.store import db
    from oriole_workstation import render
    from oriole_workstation.results import Results
    from oriole_workstation.runner import LocalAws

    conn = db.connect(database_url)
    with LocalAws(database_url) as aws:
        launcher = aws.launcher(poll_seconds=0.05)
        results = Results(conn)
        short = launcher.follow(launcher.start(SHORT_RUN), results).as_json()["experiment_id"]
        long = launcher.follow(launcher.start(LONG_RUN), results).as_json()["experiment_id"]
    small, _ = drawn(database_url, folder, str(short), *every_format(folder, "short"))
    figures: dict[str, Any] = {"three_actions_peak_kib": small, "actions": {}}
    for actions in sizes:
        lengthen(conn, long, actions)
        started = time.perf_counter()
        peak, _ = drawn(database_url, folder, str(long), *every_format(folder, f"long-{actions}"))
        growth = (peak - small) * 1024
        budget = render.MEMORY_BASE_BYTES + render.MEMORY_PER_ACTION_BYTES * actions
        figures["actions"][f"{actions:,}"] = {
            "peak_kib": peak,
            "growth_mib": round(growth / 2**20, 1),
            "budget_mib": round(budget / 2**20, 1),
            "within_budget": growth <= budget,
            "render_seconds": round(time.perf_counter() - started, 1),
        }
    conn.close()
    return figures


@contextmanager
def scratch_database() -> Iterator[str]:
    """A database of its own on the local server (``DATABASE_URL``'s, else the embedded one), migrated, dropped when
    the block ends: the seeded run never joins the researcher's results."""
    import psycopg
    from psycopg import sql

    from oriole_workstation.database import local_url, prepare

    server, name = local_url(), f"oriole_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        url = psycopg.conninfo.make_conninfo(server, dbname=name)
        prepare(url).conn.close()
        yield url
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def main() -> None:
    import psycopg
    import results_file

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, action="append", help="the long run's actions (repeatable)")
    parser.add_argument("--record", action="store_true", help="keep the figures in bench/results.json")
    args = parser.parse_args()
    sizes = args.actions or [200_000]
    with scratch_database() as url, tempfile.TemporaryDirectory() as folder:
        figures = measure(url, sizes, Path(folder))
        with psycopg.connect(url) as conn:
            where = results_file.environment(conn)
    if args.record:
        results_file.record("render memory", figures, where)
    print(json.dumps(figures | where, indent=2))


if __name__ == "__main__":
    main()
