"""Benchmark: a 1,000-repetition baseline sweep through the sweep state machine, locally.

Runs the sweep flow's ASL file under moto (``LocalAws``, as ``oriole sweep`` does) on the embedded Postgres and
reports the figures of DESIGN section 10 for sweeps: wall time, the most experiments observed running at once
(from their stored start and end times; never above the cap), the parent execution's history events and
state transitions (they do not grow with the sweep: the items are child executions), and the state
transitions of one child and of one experiment, from which the per-sweep Step Functions cost on AWS follows
(every transition billed at $0.025 per 1,000).

moto runs a distributed map's items inline, without child histories, so one child is measured by running the
map's item flow (its ItemProcessor, from the same file) as an execution of its own, on a fresh repetition.

    python bench/bench_sweep.py                      # 1,000 x oracle on perfect-7, 8 at once
    python bench/bench_sweep.py --repetitions 200 --agent explorer --maze perfect-11 --cap 4
    python bench/bench_sweep.py --record             # keeps the figures in bench/results.json
"""

from __future__ import annotations

import argparse
import io
import json
import time
import uuid

import psycopg
import results_file
from rich.console import Console

from oriole.flows import sweep_flow
from oriole.store import db
from oriole_workstation import sweep_runs
from oriole_workstation.database import local_url, prepare
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws
from oriole_workstation.sweep_progress import SweepProgress

PRICE_PER_TRANSITION = 0.025 / 1000  # Step Functions standard workflows, us-east-1


def transitions(history: list[dict]) -> int:
    return sum(event["type"].endswith("StateEntered") for event in history)


def max_running(rows: list[dict]) -> int:
    """The most experiments running at the same moment, from their stored start and end times."""
    events = sorted([(r["started_at"], 1) for r in rows] + [(r["completed_at"], -1) for r in rows])
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


def one_child(aws: LocalAws, sweep_input: dict, wait_seconds: int) -> tuple[int, int, int]:
    """History events and transitions of one map item run as its own execution (as AWS runs it), and of the
    experiment it started."""
    described = aws.sfn.describe_state_machine(stateMachineArn=aws.sweep_state_machine_arn)
    deployed = json.loads(described["definition"])
    [processor] = [
        dict(state["ItemProcessor"])
        for branch in deployed["States"]["RunRepetitions"]["Branches"]
        for state in branch["States"].values()
        if state["ItemsPath"] == "$.indices.baseline"
    ]
    processor.pop("ProcessorConfig")
    child = aws.sfn.create_state_machine(
        name=f"oriole-sweep-item-{uuid.uuid4().hex[:6]}", definition=json.dumps(processor), roleArn=described["roleArn"]
    )
    item_sweep = {**sweep_input, "id": f"{sweep_input['id']}-child", "repetitions": 1}
    arn = aws.sfn.start_execution(
        stateMachineArn=child["stateMachineArn"], input=json.dumps(sweep_flow.item_input(0, item_sweep, wait_seconds))
    )["executionArn"]
    while aws.sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        time.sleep(0.1)
    history = aws.history(arn)
    return len(history), transitions(history), transitions(aws.history(_started_execution(history)))


def _started_execution(history: list[dict]) -> str:
    """The experiment execution StartRepetition started, from the child's history."""
    for event in history:
        details = event.get("taskSucceededEventDetails")
        if details:
            payload = json.loads(details["output"])["Payload"]
            if payload.get("executionArn"):
                return payload["executionArn"]
    raise RuntimeError("the item started no experiment")


def run(repetitions: int, agent: str, maze: str, cap: int, wait_seconds: int) -> dict:
    url = local_url()
    prepare(url).conn.close()
    results = Results(db.connect(url))
    sweep_id = f"bench-{uuid.uuid4().hex[:8]}"
    sweep_input = {
        "id": sweep_id,
        "agents": [f"baseline/{agent}"],
        "mazes": [maze],
        "repetitions": repetitions,
        "provider_concurrency": {"baseline": cap},
        "wait_seconds": wait_seconds,
        "comment": "bench/bench_sweep.py",
    }
    with LocalAws(url) as aws:
        started = time.perf_counter()
        arn, _ = sweep_runs.submit(aws.sfn, aws.sweep_state_machine_arn, sweep_input)
        progress = SweepProgress(Console(file=io.StringIO()), sweep_id, [], repetitions, 0, show_lines=False)
        with progress:
            execution = sweep_runs.follow_local(aws, arn, sweep_id, results, progress, lambda running: None)
        wall = time.perf_counter() - started
        summary = sweep_runs.outcome(execution)
        parent = aws.history(arn)
        child_events, child_transitions, experiment_transitions = one_child(aws, sweep_input, wait_seconds)
    rows = results.conn.execute(
        "SELECT started_at, completed_at FROM experiments WHERE agent_id LIKE %s", (sweep_id + "/%",)
    ).fetchall()
    per_repetition = child_transitions + experiment_transitions
    total = transitions(parent) + repetitions * per_repetition
    return {
        "sweep": f"{repetitions} x baseline/{agent} on {maze}",
        "cap": cap,
        "wait_seconds": wait_seconds,
        "status": execution["status"],
        "succeeded": summary["succeeded"],
        "timed_out": summary["timedOut"],
        "experiments_stored": len(rows),
        "wall_seconds": round(wall, 1),
        "experiments_per_second": round(len(rows) / wall, 2),
        "max_running_at_once": max_running(rows),
        "parent_history_events": len(parent),
        "parent_state_transitions": transitions(parent),
        "child_history_events": child_events,
        "child_state_transitions": child_transitions,
        "experiment_state_transitions": experiment_transitions,
        "state_transitions_per_sweep_on_aws": total,
        "step_functions_usd_per_sweep_on_aws": round(total * PRICE_PER_TRANSITION, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--maze", default="perfect-7")
    parser.add_argument("--cap", type=int, default=8, help="baseline experiments at once")
    parser.add_argument("--wait-seconds", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--record", action="store_true", help="keep the figures in bench/results.json")
    args = parser.parse_args()
    figures = run(args.repetitions, args.agent, args.maze, args.cap, args.wait_seconds)
    with psycopg.connect(local_url()) as conn:
        where = results_file.environment(conn)
    if args.record:
        results_file.record(f"sweep of {args.repetitions}", figures, where)
    if args.json:
        print(json.dumps(figures | where))
        return
    width = max(len(k) for k in figures | where)
    for key, value in (figures | where).items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
