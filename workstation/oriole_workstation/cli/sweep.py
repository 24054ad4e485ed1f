"""``oriole sweep FILE`` and ``oriole sweep status ID``: run a sweep file through the sweep state machine (locally
under moto, or submitted to the deployed one) and see where a sweep stands.

The logic lives in ``oriole.core.sweep_plan`` (the runtime's: the file, the matrix, the plan) and
``oriole_workstation.sweep_runs`` (submitting and following a run); these functions read options, open the database
and print.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from oriole.core import sweep_plan
from oriole.lifecycle.sweep_tasks import stored_maze_names
from oriole.statuses import ExperimentStatus
from oriole_workstation import sweep_runs
from oriole_workstation.cli.common import Commands, err, fail, print_columns, whole_number
from oriole_workstation.cli.run import check_api_keys
from oriole_workstation.display import terminal_safe
from oriole_workstation.report import GroupBy, render_report
from oriole_workstation.results import Filters, Results


class RunByDefault(TyperGroup):
    """``oriole sweep FILE ...`` is ``oriole sweep run FILE ...``; ``oriole sweep status ID`` names its command."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = Commands(cls=RunByDefault, no_args_is_help=True, subcommand_metavar="FILE [OPTIONS] | status ID",
               help="Run a sweep file's matrix of experiments through the sweep state machine, or see where a "
                    "sweep stands (`oriole sweep FILE` runs FILE).")

Stack = Annotated[str | None, typer.Option(help="With --aws: the stack whose SweepStateMachineArn output to use "
                                                  "(default: the orchestrator stack of the deployment "
                                                  "ORIOLE_DEPLOYMENT names, OrioleOrchestrator).")]
SweepStateMachine = Annotated[str | None, typer.Option(help="With --aws: the sweep state machine (default: the "
                                                            "SweepStateMachineArn output of --stack).")]


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="The sweep file (TOML or JSON).")],
    aws: Annotated[bool, typer.Option("--aws", help="Submit it to the deployed sweep state machine and return at "
                                                    "once.")] = False,
    state_machine_arn: SweepStateMachine = None,
    stack: Stack = None,
    concurrency: Annotated[int | None, typer.Option(help="Experiments at once in all, shared among the providers "
                                                         f"(local default {sweep_runs.LOCAL_CONCURRENCY}).",
                                                    metavar="N", parser=whole_number(1, sweep_plan.MAX_CONCURRENCY))]
    = None,
    provider_concurrency: Annotated[list[str], typer.Option(help="PROVIDER=N: experiments at once of one provider "
                                                                 "(repeatable).")] = [],  # noqa: B006
    retry_failed: Annotated[bool, typer.Option(help="Run again repetitions whose experiment failed or was "
                                                    "aborted.")] = False,
    wait_seconds: Annotated[int | None, typer.Option(help="How often each running experiment's row is looked at "
                                                          "at first (default: 30 on AWS, "
                                                          f"{sweep_runs.LOCAL_WAIT_SECONDS} locally); the waits "
                                                          "grow with the experiment's age, to "
                                                          "10 minutes.", metavar="SECONDS",
                                                     parser=whole_number(1, 3600))] = None,
    dry_run: Annotated[bool, typer.Option(help="Print what would run, start nothing.")] = False,
    by: Annotated[GroupBy, typer.Option(help="The final report: one row per maze family, or per maze.")]
    = GroupBy.family,
    quiet: Annotated[bool, typer.Option(help="No line per finished experiment.")] = False,
) -> None:
    """Run a sweep file's matrix of experiments, resuming: what already ended is skipped.

    Locally the sweep state machine runs under moto until the sweep ends, then prints a summary and the
    sweep's report; with --aws the file is checked here, submitted, and the command returns (follow it with
    `oriole sweep status ID --aws`). Every experiment is tagged (comment sweep:ID, agent id ID/<cell>/r<n>).
    Exit status 2 when an experiment's input was rejected, 3 when the spend limit left experiments
    unstarted, 130 when stopped with Ctrl-C (run the same command again to go on).
    """
    spec = sweep_runs.load(file)
    local_default = None if aws or spec.concurrency else sweep_runs.LOCAL_CONCURRENCY
    execution_input = sweep_runs.run_input(  # every check PlanSweep makes, a dry run makes too
        spec, concurrency=concurrency or local_default, retry_failed=retry_failed,
        provider_concurrency=sweep_runs.provider_caps(spec, provider_concurrency),
        wait_seconds=wait_seconds or (None if aws else sweep_runs.LOCAL_WAIT_SECONDS))
    results = _results(aws)
    planned = sweep_plan.plan(spec, stored_maze_names(results.store) if results else lambda key: None)
    _check_prompts(spec, aws)
    if not aws:  # on AWS the deployed functions read the keys from their secrets
        check_api_keys({item.cell.provider for item in planned})
    todo = sweep_plan.pending(spec.id, planned, results.store.sweep_experiments(spec.id), retry_failed) \
        if results else range(len(planned))
    done = f"{len(planned) - len(todo)} already done, {len(todo)} to run" if results else \
        "what already ran is read where it runs (no DATABASE_URL)"
    err.print(f"sweep {spec.id}: {len(planned)} experiments ({len(planned) // spec.repetitions} cells x "
              f"{spec.repetitions} repetitions), {done}", highlight=False, soft_wrap=True, markup=False)
    if dry_run:
        for index in todo:
            item = planned[index]
            typer.echo(terminal_safe(f"{item.agent_id(spec.id)}  {item.cell.describe()} r{item.repetition}"))
        return
    if aws:
        _submit(execution_input, state_machine_arn, stack)
        return
    _run_locally(execution_input, planned, len(todo), results, by, quiet)


def _results(aws: bool) -> Results | None:
    """The database: the local one, or with --aws the deployed one when DATABASE_URL points at it (a sweep can
    be submitted without it: the deployed PlanSweep checks stored mazes and skips what already ran)."""
    from oriole_workstation.database import open_results

    return open_results(aws) if not aws or os.environ.get("DATABASE_URL") else None


def _check_prompts(spec: sweep_plan.SweepFile, aws: bool) -> None:
    from oriole_workstation import prompts

    if aws:
        import boto3

        sweep_plan.check_prompts(spec, prompts.aws_prompts(boto3.client("ssm")))
    else:
        sweep_plan.check_prompts(spec, prompts.local_prompts())


def _submit(execution_input: dict, state_machine_arn: str | None, stack: str | None) -> None:
    import boto3

    from oriole_workstation import cloud

    sfn = boto3.client("stepfunctions")
    arn = state_machine_arn or cloud.stack_outputs(boto3.client("cloudformation"), stack)["SweepStateMachineArn"]
    execution_arn, new = sweep_runs.submit(sfn, arn, execution_input)
    typer.echo(("started " if new else "already running: ") + execution_arn)
    err.print(f"follow it with `oriole sweep status {execution_input['id']} --aws`; stop it from the console or "
              f"with `aws stepfunctions stop-execution --execution-arn {execution_arn}`", highlight=False,
              soft_wrap=True, markup=False)


def _run_locally(execution_input: dict, planned: list[sweep_plan.Planned], total: int, results: Results, by: GroupBy,
                 quiet: bool) -> None:
    from oriole_workstation.cli.run import real_bedrock_client
    from oriole_workstation.database import local_url
    from oriole_workstation.runner import LocalAws

    sweep_id = execution_input["id"]
    bedrock = real_bedrock_client({"config": {}}) if any(p.cell.provider == "bedrock" for p in planned) else None

    def stopping(running: int) -> None:
        err.print(f"stopping: nothing more starts; {running} running experiment(s) finish (Ctrl-C again to leave "
                  "them to `oriole doctor --fix`)", highlight=False, markup=False)

    try:
        with LocalAws(local_url(), bedrock_client=bedrock) as local, \
                sweep_runs.Tracker(err, planned, sweep_id, total, show_lines=not quiet) as tracker:
            execution_arn, _ = sweep_runs.submit(local.sfn, local.sweep_state_machine_arn, execution_input)
            execution = sweep_runs.follow_local(local, execution_arn, sweep_id, results, tracker, stopping)
    except KeyboardInterrupt:
        raise fail("interrupted: experiments left running are closed by `oriole doctor --fix`; run the same "
                   "command again to resume", 130) from None
    if execution["status"] == "ABORTED":
        raise fail("stopped: run the same command again to resume", 130)
    summary = sweep_runs.outcome(execution)
    typer.echo(sweep_runs.summary_line(summary), nl=False)
    typer.echo(render_report(results, by=by, filters=Filters(tag=f"sweep:{sweep_id}")), nl=False)
    if summary["rejected"]:
        raise typer.Exit(2)
    if summary["skipped"]:  # only the spend limit leaves some unstarted
        raise typer.Exit(3)


@app.command()
def status(
    sweep_id: Annotated[str, typer.Argument(metavar="ID", help="The sweep's id (the file's id).")],
    aws: Annotated[bool, typer.Option("--aws", help="The deployed sweep: its execution, and the deployed "
                                                    "database (DATABASE_URL).")] = False,
    state_machine_arn: SweepStateMachine = None,
    stack: Stack = None,
) -> None:
    """Where a sweep stands: its latest execution (with --aws), its repetitions by status, its spend, and the
    experiments running now."""
    from oriole_workstation.database import open_results

    results = open_results(aws)
    rows = results.store.sweep_experiments(sweep_id)
    executions = _aws_executions(sweep_id, state_machine_arn, stack) if aws else []
    if not rows and not executions:
        raise fail(f"no experiment of sweep {sweep_id!r} found" + (" and no execution" if aws else ""))
    if executions:
        typer.echo(sweep_runs.execution_line(executions[0]))
    counts = sweep_runs.status_counts(rows)
    parts = ", ".join(f"{n} {state.replace('_', ' ')}" for state, n in sorted(counts.items()))
    typer.echo(f"{sum(counts.values())} repetitions started: {parts or 'none'}; spent "
               f"${results.store.sweep_spend(sweep_id):.4f}")
    running = [results.summary(row.id) for row in rows if row.status == ExperimentStatus.RUNNING]
    if running:
        print_columns(("experiment", "agent", "maze", "actions", "seconds"),
                      [(r["experiment_id"], f"{r['llm_provider']}/{r['model_name']}", r["maze"], r["actions"],
                        round(r["duration_seconds"])) for r in running])


def _aws_executions(sweep_id: str, state_machine_arn: str | None, stack: str | None) -> list[dict]:
    import boto3

    from oriole_workstation import cloud

    sfn = boto3.client("stepfunctions")
    arn = state_machine_arn or cloud.stack_outputs(boto3.client("cloudformation"), stack)["SweepStateMachineArn"]
    return sweep_runs.sweep_executions(sfn, arn, sweep_id)
