"""``oriole doctor``: experiments left open although no execution runs them any more, and closing them."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Annotated

import typer

from oriole.store.experiments import OpenExperiment
from oriole_workstation.cli.common import out, print_columns, print_json
from oriole_workstation.display import terminal_safe
from oriole_workstation.results import Results

LOCAL_ZOMBIE_CAUSE = "no oriole run process holds it: the process that ran the local execution ended"


def _zombies(results: Results, aws: bool) -> list[tuple[OpenExperiment, dict]]:
    """Open experiments nothing runs any more, each with the status-change detail that closes it.

    Locally an execution lives only in the process that started it (``oriole run``, a sweep, a test),
    which holds every execution it runs; an open experiment of a local execution that no live process
    holds, now and again ``LOCK_GRACE_SECONDS`` later (a live runner whose lock connection dropped takes
    its locks again within that time), is a zombie. With ``--aws``: an open experiment whose latest
    execution is not RUNNING, judged as the deployed reconciler judges it (``oriole.lifecycle.reconcile``).
    """
    from oriole.lifecycle import reconcile
    from oriole_workstation.run_locks import LOCK_GRACE_SECONDS
    from oriole_workstation.runner import EXECUTION_PREFIX

    if aws:
        from oriole.handlers.aws import describe_execution

        return reconcile.ended(results.store, describe_execution, lambda arn: not arn.startswith(EXECUTION_PREFIX))
    rows = results.store.open_experiments(EXECUTION_PREFIX)
    unheld = {row.last_execution for row in rows} - results.held([row.last_execution for row in rows])
    if unheld:
        time.sleep(LOCK_GRACE_SECONDS)
        unheld -= results.held(sorted(unheld))
    return [
        (row, {**reconcile.gone(row.last_execution), "cause": LOCAL_ZOMBIE_CAUSE})
        for row in rows
        if row.last_execution in unheld
    ]


def doctor(
    fix: Annotated[bool, typer.Option("--fix", help="Close them, as the status-change finalizer does.")] = False,
    aws: Annotated[
        bool,
        typer.Option(
            "--aws",
            help="Judge experiments run on AWS by their executions in your "
            "account (DATABASE_URL points at that database).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Find experiments left open that nothing runs any more.

    Locally: open experiments of local executions that no live `oriole run` process holds. With --aws:
    open experiments whose latest execution is no longer RUNNING. --fix closes each through the
    status-change finalizer (status, completed_at and a failure reason naming the execution).
    """
    from oriole.handlers.executions import execution_status
    from oriole.lifecycle import reconcile
    from oriole_workstation.database import open_results

    found = []
    results = open_results(aws)
    with results.conn:
        for row, detail in _zombies(results, aws):
            item = {
                **asdict(row),
                "started_at": row.started_at.isoformat(timespec="seconds"),
                "last_turn_at": row.last_turn_at and row.last_turn_at.isoformat(timespec="seconds"),
                "execution_status": detail["status"],
                "cause": detail.get("cause") or detail.get("error"),
                "closed": False,
                "failure_reason": None,
            }
            if fix:
                closed = reconcile.close(results.store, detail, execution_status)
                item.update(closed=closed["closed"], failure_reason=closed["failureReason"])
            found.append(item)
    if as_json:
        print_json({"zombies": found, "fixed": fix})
        return
    if not found:
        out.print("no open experiment without a running execution")
        return
    print_columns(
        ("experiment", "maze", "agent", "started", "turns", "actions", "last turn", "last execution"),
        [
            (
                z["experiment_id"],
                z["maze"],
                f"{z['llm_provider']}/{z['model_name']}",
                z["started_at"],
                z["turns"],
                z["actions"],
                z["last_turn_at"] or "-",
                z["last_execution"].rsplit(":", 1)[-1] + (f" ({z['execution_status']})" if aws else ""),
            )
            for z in found
        ],
    )
    why = "their executions are no longer running" if aws else "no live `oriole run` process holds them"
    if not fix:
        out.print(
            f"\n{len(found)} open experiment(s): {why}. Close them with `oriole doctor --fix{' --aws' if aws else ''}`."
        )
        return
    for z in found:
        outcome = f"closed: {z['failure_reason']}" if z["closed"] else "left open: a successor execution carries it on"
        out.print(terminal_safe(f"experiment {z['experiment_id']} {outcome}"), markup=False, highlight=False)
