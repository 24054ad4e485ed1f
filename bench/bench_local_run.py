"""Benchmark: one long random-agent experiment through the real local state machine.

Reports the figures of DESIGN section 10 for the local mode: wall time, and the CPU seconds of this process (the
state machine interpreter and the handlers) and of its database backend, which a loaded machine does not inflate as
it does the wall time (``--runs 3``: the experiment run three times, each run's figures and their medians, with
the load average; compare CPU seconds between checkouts, and wall seconds only at a like load); the seconds the
handlers waited for their statements (``database_wait_seconds``: the server's CPU, each commit's WAL flush, the
trips and, under load, the server's wait for a core: what the wall time holds beside this process's CPU);
database round trips per turn (statements counted on the handlers' connection, agent task plus CheckProgress),
state transitions and history events per turn and per execution. Run with ``make bench`` or
``python bench/bench_local_run.py --max-moves 10000 --actions-per-turn 8``; ``--record`` keeps the figures in
``bench/results.json`` (``results_file.py``).

``--actions-per-turn 1`` is the longest experiment the limits allow (10,000 turns): it shows the chain
of executions (continue-as-new every ``maxTurnsPerExecution`` turns) keeping every execution's history
under Step Functions' 25,000-event limit, which moto does not enforce.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import psycopg
import results_file

from oriole.store import db
from oriole_workstation.database import local_url, prepare
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws, statement_seconds

AGENT, CHECK = "oriole-InvokeBaselineAgent", "oriole-CheckProgress"


def server_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) a PostgreSQL backend of this machine has used, from ``/proc``; None when the
    backend is not a process here (a remote server)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def run(maze: str, max_moves: int, actions_per_turn: int, seed: int) -> dict:
    url = local_url()
    prepare(url).conn.close()
    execution_input = {
        "mazeId": maze,
        "llmProvider": "baseline",
        "modelName": "random",
        "comment": "bench/bench_local_run.py",
        "config": {"maxMoves": max_moves, "maxActionsPerTurn": actions_per_turn, "seed": seed},
    }
    with LocalAws(url) as aws:
        backend = db.connection().execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        server_before, waited_before = server_cpu_seconds(backend), statement_seconds()
        started, cpu_started = time.perf_counter(), time.process_time()
        launcher = aws.launcher(poll_seconds=0.5)
        result = launcher.follow(launcher.start(execution_input), Results(db.connect(url)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        server_after, waited = server_cpu_seconds(backend), statement_seconds() - waited_before
        server = None if server_before is None or server_after is None else server_after - server_before
        summary = result.summary
        histories = [aws.history(arn) for arn in summary.execution_arns]
        turns = summary.turns
        return {
            "maze": maze,
            "agent": "random",
            "status": summary.status,
            "actions": summary.actions,
            "turns": turns,
            "wall_seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2),
            "database_cpu_seconds": None if server is None else round(server, 2),
            "database_wait_seconds": round(waited, 2),
            "actions_per_second": round(summary.actions / wall),
            "db_round_trips_per_turn": round((aws.statements[AGENT] + aws.statements[CHECK]) / turns, 2),
            "db_round_trips_agent_task": round(aws.statements[AGENT] / aws.invocations[AGENT], 2),
            "db_round_trips_check_progress": round(aws.statements[CHECK] / aws.invocations[CHECK], 2),
            "executions": len(histories),
            "history_events_per_execution": [len(h) for h in histories],
            "max_history_events_per_execution": max(len(h) for h in histories),
            "state_transitions_per_execution": [sum(e["type"].endswith("StateEntered") for e in h) for h in histories],
            "history_events_per_turn": round(sum(len(h) for h in histories) / turns, 2),
            "state_transitions_per_turn": round(
                sum(sum(e["type"].endswith("StateEntered") for e in h) for h in histories) / turns, 2
            ),
        }


TIMES = ("wall_seconds", "cpu_seconds", "database_cpu_seconds", "database_wait_seconds")


def runs(maze: str, max_moves: int, actions_per_turn: int, seed: int, count: int) -> dict:
    """``count`` runs' figures: the last run's counts, each time's median and every run's time (``<time>_runs``),
    and the load average before each run (``load_averages``)."""
    measured, loads = [], []
    for _ in range(count):
        loads.append(round(os.getloadavg()[0], 1))
        measured.append(run(maze, max_moves, actions_per_turn, seed))
    figures = dict(measured[-1])
    if count == 1:
        return figures
    for name in TIMES:
        values = [m[name] for m in measured]
        figures[name] = None if None in values else statistics.median(values)
        figures[f"{name}_runs"] = values
    figures["actions_per_second"] = round(figures["actions"] / figures["wall_seconds"])
    figures["load_averages"] = loads
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maze", default="medium-60")
    parser.add_argument("--max-moves", type=int, default=10_000)
    parser.add_argument("--actions-per-turn", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=1, help="run the experiment this many times: medians and each run")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--record", action="store_true", help="keep the figures in bench/results.json")
    args = parser.parse_args()
    figures = runs(args.maze, args.max_moves, args.actions_per_turn, args.seed, args.runs)
    with psycopg.connect(local_url()) as conn:
        where = results_file.environment(conn)
    if args.record:
        results_file.record(f"local run, {args.actions_per_turn} actions a turn", figures, where)
    if args.json:
        print(json.dumps(figures | where))
        return
    width = max(len(k) for k in figures | where)
    for key, value in (figures | where).items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
