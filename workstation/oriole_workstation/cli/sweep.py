"""``oriole sweep FILE`` and ``oriole sweep status ID``: run a sweep file through the sweep state machine (locally
under moto, or submitted to the deployed one) and see where a sweep stands.

The logic lives in ``oriole.core.sweep_plan`` (the runtime's: the file, the matrix, the plan) and
``oriole_workstation.sweep_runs`` (submitting and following a run); these functions read options, open the database
and print.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from oriole import catalog
from oriole.core import sweep_plan as plans
from oriole.lifecycle.sweep_tasks import stored_maze_names
from oriole.provider_registry import PROVIDERS
from oriole.statuses import ExecutionStatus, ExperimentStatus
from oriole_workstation import sweep_display as display
from oriole_workstation import sweep_runs
from oriole_workstation.cli.common import Commands, closest, err, fail, print_columns, terminal_width, whole_number
from oriole_workstation.cli.run import check_api_keys
from oriole_workstation.display import terminal_safe
from oriole_workstation.report import GroupBy, render_report
from oriole_workstation.results import Filters, Results
from oriole_workstation.sweep_progress import SweepProgress


class RunByDefault(TyperGroup):
    """``oriole sweep FILE ...`` is ``oriole sweep run FILE ...`` and ``oriole sweep --help`` its help (every option
    of a run, and the status command named); ``oriole sweep status ID`` names its command."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = Commands(
    cls=RunByDefault,
    no_args_is_help=True,
    subcommand_metavar="FILE [OPTIONS] | status ID",
    help="Run a sweep file, or see where one stands.\n\noriole sweep FILE runs a sweep file (oriole sweep --help: "
    "its options); oriole sweep status ID says where a sweep stands.",
)

Stack = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="With --aws: the stack whose SweepStateMachineArn output to use "
        "(default: the orchestrator stack of the deployment "
        "ORIOLE_DEPLOYMENT names, OrioleOrchestrator).",
    ),
]
SweepStateMachine = Annotated[
    str | None,
    typer.Option(help="With --aws: the sweep state machine (default: the SweepStateMachineArn output of --stack)."),
]


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="The sweep file (TOML or JSON).")],
    aws: Annotated[
        bool, typer.Option("--aws", help="Submit it to the deployed sweep state machine and return at once.")
    ] = False,
    state_machine_arn: SweepStateMachine = None,
    stack: Stack = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            help="Experiments at once in all, shared among the providers "
            f"(local default {sweep_runs.LOCAL_CONCURRENCY}).",
            metavar="N",
            parser=whole_number(1, plans.MAX_CONCURRENCY),
        ),
    ] = None,
    provider_concurrency: Annotated[
        list[str],
        typer.Option(metavar="PROVIDER=N", help="Experiments at once of one provider (repeatable)."),
    ] = [],  # noqa: B006
    server_concurrency: Annotated[
        list[str],
        typer.Option(
            metavar="URL=N",
            help="Experiments at once against one model server, by the URL its agents name (repeatable; "
            "at most 4 servers and agents with caps of their own).",
        ),
    ] = [],  # noqa: B006
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Run again repetitions whose experiment ended in an error (stopped ones run again anyway).",
        ),
    ] = False,
    seed_from: Annotated[
        str | None,
        typer.Option(
            metavar="ID",
            help="Run the file under its own id with the "
            "sampled mazes and seeds of sweep ID: every seeded run comes back "
            "action for action.",
        ),
    ] = None,
    allow_unpriced: Annotated[
        bool,
        typer.Option(
            "--allow-unpriced",
            help="Under spend_limit_usd, run models with no known price, counting their tokens at $0.",
        ),
    ] = False,
    wait_seconds: Annotated[
        int | None,
        typer.Option(
            help="How often each running experiment's row is looked at "
            "at first (default: 30 on AWS, "
            f"{sweep_runs.LOCAL_WAIT_SECONDS} locally); the waits "
            "grow with the experiment's age, to "
            "10 minutes.",
            metavar="SECONDS",
            parser=whole_number(1, 3600),
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the experiments as they would run (seed, model server), and the prices; start nothing.",
        ),
    ] = False,
    pause_after: Annotated[
        int,
        typer.Option(
            help="Start no more experiments of an agent whose last N experiments of this run failed with the same "
            "error (its server is down); 0: never.",
            metavar="N",
            parser=whole_number(0, 1000),
        ),
    ] = plans.PAUSE_AFTER_ERRORS,
    no_server_check: Annotated[
        bool,
        typer.Option(
            "--no-server-check",
            help="Start without first asking each model server (once, before anything starts) whether it answers "
            "and serves its models.",
        ),
    ] = False,
    by: Annotated[
        GroupBy, typer.Option(help="The final report: one row per maze family, or per maze.")
    ] = GroupBy.family,
    quiet: Annotated[bool, typer.Option("--quiet", help="No line per finished experiment.")] = False,
) -> None:
    """Run a sweep file, resuming what is left.

    What already ended is skipped. Each model server is asked once before anything starts. Locally the sweep
    runs on this machine until it ends (a progress bar on a terminal, plain lines when piped), then prints a
    summary and the sweep's report; with --aws the file is checked here, submitted, and the command returns
    (follow it with `oriole sweep status ID --aws`). `oriole sweep status ID` says where a sweep stands. Every
    experiment is recorded as the sweep's (agent id ID/<cell>/r<n>; its comment carries sweep:ID for a reader)
    and gets a seed derived from the sweep id (or --seed-from), its maze and its repetition.

    Exit status 1 when an experiment ended in an error or an agent was paused (its server failed --pause-after
    experiments in a row alike), 2 when an experiment's input was rejected or a server check refused the sweep,
    3 when the spend limit left experiments unstarted, 130 when stopped with Ctrl-C (run the same command again
    to go on).
    """
    spec = sweep_runs.load(file)
    local_default = None if aws or spec.concurrency else sweep_runs.LOCAL_CONCURRENCY
    execution_input = sweep_runs.run_input(  # every check PlanSweep makes, a dry run makes too
        spec,
        concurrency=concurrency or local_default,
        retry_failed=retry_failed,
        provider_concurrency=sweep_runs.provider_caps(spec, provider_concurrency),
        server_concurrency=sweep_runs.server_caps(spec, server_concurrency),
        wait_seconds=wait_seconds or (None if aws else sweep_runs.LOCAL_WAIT_SECONDS),
        seed_from=seed_from,
        allow_unpriced=allow_unpriced,
        pause_after_errors=pause_after,
    )
    run_spec = plans.validate(plans.SweepRun, execution_input, "sweep input")
    results = _results(aws)
    matrix = plans.cells(run_spec, stored_maze_names(results.store) if results else lambda key: None)
    planned = [plans.planned_at(matrix, index) for index in range(len(matrix) * run_spec.repetitions)]
    _check_prompts(spec, aws)
    stored_prices = _stored_prices(aws)
    plans.check_prices(run_spec, matrix, stored_prices, allow_unpriced)
    if not aws:  # on AWS the deployed functions read the keys from their secrets
        check_api_keys({item.cell.provider for item in planned})
    todo = (
        plans.pending(spec.id, planned, results.store.sweep_experiments(spec.id), retry_failed)
        if results
        else range(len(planned))
    )
    done = (
        f"{len(planned) - len(todo)} already done, {len(todo)} to run"
        if results
        else "what already ran is read where it runs (no DATABASE_URL)"
    )
    seeds_of = f"; seeds and sampled mazes of sweep {run_spec.seed_from}" if run_spec.seed_from else ""
    _note(
        f"sweep {spec.id}: {len(planned)} experiments ({len(matrix)} cells x {spec.repetitions} repetitions), "
        f"{done}{seeds_of}"
    )
    for line in display.price_lines(matrix, stored_prices, allow_unpriced):
        _note(line)
    _note(display.caps_line(run_spec, matrix, [planned[index].cell for index in todo], aws))
    defaults = _server_defaults(aws)
    if not no_server_check:
        _check_servers([planned[index].cell for index in todo], defaults, aws)
    if dry_run:
        for index in todo:
            typer.echo(terminal_safe(display.plan_line(planned[index], run_spec, defaults)))
        return
    if aws or results is None:  # locally there is always a database
        _submit(execution_input, state_machine_arn, stack)
        return
    if not results.hold_sweep(spec.id):
        raise fail(
            f"sweep {spec.id} is already running in another oriole process on this database: wait for it to end "
            f"(`oriole sweep status {spec.id}` shows where it stands), or stop it there with Ctrl-C; then run this "
            "command again to resume"
        )
    # PlanSweep records the plan once the local state machine is up, seconds from now: recorded here first, so
    # `oriole watch --sweep ID` started meanwhile waits for the sweep instead of taking its id for a typo
    results.store.record_sweep_plan(spec.id, len(planned), run_spec.model_dump(mode="json"))
    _run_locally(execution_input, planned, len(todo), results, by, quiet)


def _check_servers(cells: list[plans.Cell], defaults: dict[str, object], aws: bool) -> None:
    """Ask each model server the cells go to, once, whether it answers and serves their models (on AWS only the
    AWS services: a server's address is reached from the deployment's network, not from here); refuse the sweep,
    before anything starts, with every server that cannot serve it."""
    from oriole.providers.transport import environment_api_key
    from oriole_workstation import server_checks

    found = server_checks.servers(cells, defaults)
    if aws and (elsewhere := [s for s in found if PROVIDERS[s.provider].servers is not None]):
        _note(f"not checked from here: {', '.join(s.address for s in elsewhere)} (the deployment reaches them)")
        found = [s for s in found if s not in elsewhere]

    def api_key(provider: str) -> str | None:  # a local run's, from the environment (on AWS, the deployment's)
        return environment_api_key(provider) if PROVIDERS[provider].api_key and not aws else None

    checked = server_checks.check_all(found, api_key)
    for answered in checked:
        if answered.problem is None:
            _note(answered.line())
    if problems := [answered.line() for answered in checked if answered.problem]:
        raise fail(
            "; ".join(problems) + ". Nothing was started: fix the server or the sweep file (--no-server-check "
            "starts it anyway)"
        )


def _note(line: str) -> None:
    """A line on stderr, whole (never wrapped, never markup)."""
    err.print(terminal_safe(line), highlight=False, soft_wrap=True, markup=False)


def _stored_prices(aws: bool) -> dict[str, str]:
    """The pricing entries where the sweep runs (Parameter Store name -> JSON): the local prices file, or the
    deployed Parameter Store."""
    from oriole_workstation import price_list

    if not aws:
        return price_list.parameters()
    import boto3

    return {
        catalog.pricing_name(model): json.dumps(value)
        for model, value in price_list.aws_prices(boto3.client("ssm")).items()
    }


def _server_defaults(aws: bool) -> dict[str, object]:
    """The model servers an experiment goes to when its config names none: the catalog's locally (the local
    Parameter Store is seeded from it), the deployed Parameter Store's with --aws."""
    if not aws:
        return {p.key: p.default for p in catalog.CATALOG}
    import boto3

    from oriole_workstation import cloud

    values = cloud.parameter_values(boto3.client("ssm"))
    return {p.key: values.get(p.name, p.default) for p in catalog.CATALOG}


def _results(aws: bool) -> Results | None:
    """The database: the local one, or with --aws the deployed one when DATABASE_URL points at it (a sweep can
    be submitted without it: the deployed PlanSweep checks stored mazes and skips what already ran)."""
    from oriole_workstation.database import open_results

    return open_results(aws) if not aws or os.environ.get("DATABASE_URL") else None


def _check_prompts(spec: plans.SweepFile, aws: bool) -> None:
    from oriole_workstation import prompts

    if aws:
        import boto3

        plans.check_prompts(spec, prompts.aws_prompts(boto3.client("ssm")))
    else:
        plans.check_prompts(spec, prompts.local_prompts())


def _submit(execution_input: dict, state_machine_arn: str | None, stack: str | None) -> None:
    import boto3

    from oriole_workstation import cloud

    sfn = boto3.client("stepfunctions")
    arn = state_machine_arn or cloud.stack_outputs(boto3.client("cloudformation"), stack)["SweepStateMachineArn"]
    execution_arn, new = sweep_runs.submit(sfn, arn, execution_input)
    typer.echo(("started " if new else "already running: ") + execution_arn)
    err.print(
        f"follow it with `oriole sweep status {execution_input['id']} --aws`; stop it from the console or "
        f"with `aws stepfunctions stop-execution --execution-arn {execution_arn}`",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )


def _run_locally(
    execution_input: dict, planned: list[plans.Planned], to_run: int, results: Results, by: GroupBy, quiet: bool
) -> None:
    from oriole.lifecycle.sweep_tasks import paused
    from oriole_workstation.cli.run import real_bedrock_client, real_bedrock_control
    from oriole_workstation.database import local_url
    from oriole_workstation.runner import LocalAws

    sweep_id = execution_input["id"]
    run = plans.validate(plans.SweepRun, execution_input, "sweep input")
    bedrock = (
        real_bedrock_client({"config": {}}) if any(PROVIDERS[p.cell.provider].aws_service for p in planned) else None
    )

    def stopping(running: int) -> None:
        err.print(
            f"stopping: nothing more starts; {running} running experiment(s) finish (Ctrl-C again to leave "
            "them to `oriole doctor --fix`)",
            highlight=False,
            markup=False,
        )

    progress = SweepProgress(
        err,
        sweep_id,
        planned,
        to_run,
        sweep_runs.first_id(results, sweep_id),
        execution_input.get("spend_limit_usd"),
        show_lines=not quiet,
        paused=lambda cell: paused(run, results.store, cell),
        open_before=sweep_runs.left_open(results, sweep_id),
    )
    try:
        control = real_bedrock_control() if bedrock is not None else None
        with LocalAws(local_url(), bedrock_client=bedrock, bedrock_control=control) as local, progress:
            execution_arn, _ = sweep_runs.submit(local.sfn, local.sweep_state_machine_arn, execution_input)
            execution = sweep_runs.follow_local(local, execution_arn, sweep_id, results, progress, stopping)
    except KeyboardInterrupt:
        raise fail(
            "interrupted: experiments left running are closed by `oriole doctor --fix`; run the same "
            "command again to resume",
            130,
        ) from None
    if execution["status"] == ExecutionStatus.ABORTED:
        raise fail("stopped: run the same command again to resume", 130)
    summary = sweep_runs.outcome(execution)
    typer.echo(sweep_runs.summary_line(summary), nl=False)
    typer.echo(render_report(results, by=by, filters=Filters(sweeps=(sweep_id,)), width=terminal_width()), nl=False)
    if summary["rejected"]:
        raise typer.Exit(2)
    if summary["errors"] or summary["paused"]:
        paused_text = f", {summary['paused']} not started (their agent paused)" if summary["paused"] else ""
        raise fail(
            f"{summary['errors']} experiment(s) of sweep {sweep_id} ended in an error{paused_text}: "
            f"`oriole sweep status {sweep_id}` counts their reasons; once fixed, run the same command again "
            "(--retry-failed runs the errors again)",
            1,
        )
    if summary["skipped"]:  # only the spend limit leaves some unstarted
        raise typer.Exit(3)


@app.command()
def status(
    sweep_id: Annotated[str, typer.Argument(metavar="ID", help="The sweep's id (the file's id).")],
    aws: Annotated[
        bool, typer.Option("--aws", help="The deployed sweep: its execution, and the deployed database (DATABASE_URL).")
    ] = False,
    state_machine_arn: SweepStateMachine = None,
    stack: Stack = None,
) -> None:
    """Where a sweep stands.

    Planned, done, running and left (as its latest run planned it), how the done ones ended and why those that
    failed did, its spend and tokens, its latest execution (with --aws) and the experiments running now."""
    from oriole_workstation.database import open_results

    results = open_results(aws)
    rows = results.store.sweep_experiments(sweep_id)
    plan = results.sweep_plan(sweep_id)
    executions = _aws_executions(sweep_id, state_machine_arn, stack) if aws else []
    if not rows and not executions and plan is None:
        known = closest(sweep_id, results.known_values("sweeps", sweep_id))
        raise fail(f"no sweep {sweep_id}: no experiment, no plan{', no execution' if aws else ''} ({known})")
    if executions:
        typer.echo(sweep_runs.execution_line(executions[0]))
    for line in display.status_lines(sweep_id, plan, rows):
        typer.echo(terminal_safe(line))
    running = [
        summary for row in rows if row.status == ExperimentStatus.RUNNING and (summary := results.summary(row.id))
    ]
    if running:
        print_columns(
            ("experiment", "agent", "maze", "actions", "seconds"),
            [
                (r.experiment_id, f"{r.llm_provider}/{r.model_name}", r.maze, r.actions, round(r.duration_seconds))
                for r in running
            ],
        )


def _aws_executions(sweep_id: str, state_machine_arn: str | None, stack: str | None) -> list[dict]:
    import boto3

    from oriole_workstation import cloud

    sfn = boto3.client("stepfunctions")
    arn = state_machine_arn or cloud.stack_outputs(boto3.client("cloudformation"), stack)["SweepStateMachineArn"]
    return sweep_runs.sweep_executions(sfn, arn, sweep_id)
