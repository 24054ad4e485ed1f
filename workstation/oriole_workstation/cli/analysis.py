"""``oriole report``, ``oriole render`` and ``oriole sweep``: the commands over stored results.

The logic lives in ``report``, ``render`` and ``sweep`` (free of the CLI library); these functions only
read options, open the database and print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oriole_workstation import cloud, report_html
from oriole_workstation import sweep as sweeps
from oriole_workstation.cli.common import (
    AwsDatabase,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SinceFilter,
    TagFilter,
    UntilFilter,
    err,
    fail,
)
from oriole_workstation.display import terminal_safe
from oriole_workstation.render import WRITERS, Run, write
from oriole_workstation.report import Format, GroupBy, render_report
from oriole_workstation.results import Filters, Results

REPLAYS = "replays"  # the folder beside an HTML report that holds its replays


def report(
    model: ModelFilter = None,
    prompt: PromptFilter = None,
    maze: MazeFilter = None,
    since: SinceFilter = None,
    until: UntilFilter = None,
    tag: TagFilter = None,
    by: Annotated[GroupBy, typer.Option(help="One row per maze family, or per maze.")] = GroupBy.family,
    output: Annotated[Format, typer.Option("--format", help="table, csv, json or html.")] = Format.table,
    file: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of printing.")]
    = None,
    with_replays: Annotated[bool, typer.Option(help="With --format html -o FILE: render each experiment's replay "
                                                    "into replays/ beside the page and link it.")] = False,
    aws: AwsDatabase = False,
) -> None:
    """Compare models, prompts and settings, as a table, CSV, JSON or a self-contained HTML page.

    Per group: success rate with its 95% Wilson interval, median actions to the goal, median path
    efficiency, tokens and cost per run and per success. Runs are the experiments that ended on the agent's
    merits (succeeded, a limit, or an ending the agent caused such as stalling); infrastructure and provider
    failures are counted under errors. Each row is one model x prompt x maze family (or maze with --by maze)
    x the configuration values that differ among the compared experiments. The HTML page adds charts (the
    success rate across the mazes, efficiency and actions to the goal, tokens and cost per success) and
    every experiment it counts.
    """
    from oriole_workstation.database import open_results

    if with_replays and (output is not Format.html or file is None):
        raise fail("--with-replays writes replays beside the page: use it with --format html -o FILE")
    results = open_results(aws)
    filters = Filters(model, prompt, maze, since, until, tag)
    replays = write_replays(results, filters, file.parent) if with_replays else None
    text = report_html.render(results, by, filters, replays) if output is Format.html else \
        render_report(results, output, by, filters)
    if file is None:
        typer.echo(text, nl=False)
        return
    file.write_text(text, encoding="utf-8")
    err.print(f"wrote {file}" + (f" and {len(replays)} replays in {file.parent / REPLAYS}" if replays else ""),
              highlight=False, markup=False)


def write_replays(results: Results, filters: Filters, folder: Path) -> dict[int, str]:
    """Each experiment of the report as an HTML replay in ``folder/replays``; experiment id -> relative link."""
    (folder / REPLAYS).mkdir(parents=True, exist_ok=True)
    links = {}
    for row in results.compared(filters):
        name = f"{REPLAYS}/experiment-{row['experiment_id']}.html"
        write(Run.from_record(results.experiment_run(row["experiment_id"])), [folder / name])
        links[row["experiment_id"]] = name
    return links


def render(
    experiment: Annotated[int, typer.Argument(help="Experiment id.")],
    output: Annotated[list[Path], typer.Option("--output", "-o", help="File to write; its suffix picks the format "
                                               f"({', '.join(WRITERS)}). Repeatable.")] = [],  # noqa: B006
    replay: Annotated[bool, typer.Option("--replay", help="Write the replays (GIF and HTML) instead of the "
                                                          "pictures (PNG and SVG).")] = False,
    directory: Annotated[Path, typer.Option("--dir", help="Where files named experiment-N.* go.")] = Path(),
    aws: AwsDatabase = False,
) -> None:
    """Draw a run: PNG and SVG pictures, or with --replay an animated GIF and an HTML page with step controls.

    Without --output, writes experiment-N.png and experiment-N.svg (--replay: .gif and .html) into --dir.
    """
    from oriole_workstation.database import open_results

    record = open_results(aws).experiment_run(experiment)
    if record is None:
        raise fail(f"experiment {experiment} does not exist")
    targets = output or [directory / f"experiment-{experiment}{suffix}"
                         for suffix in ((".gif", ".html") if replay else (".png", ".svg"))]
    for path in write(Run.from_record(record), targets):
        typer.echo(f"wrote {path}")


def sweep(
    file: Annotated[Path, typer.Argument(help="The sweep file (TOML or JSON).")],
    aws: Annotated[bool, typer.Option("--aws", help="Start executions of the deployed state machine; "
                                                    "DATABASE_URL points at the deployed database.")] = False,
    state_machine_arn: Annotated[str | None, typer.Option(help="With --aws: the state machine (default: the "
                                                               "StateMachineArn output of --stack).")]
    = None,
    stack: Annotated[str, typer.Option(help="With --aws: the stack whose StateMachineArn output to use.")]
    = cloud.ORCHESTRATOR_STACK,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Experiments at once in all (local default "
                                                                f"{sweeps.LOCAL_CONCURRENCY}).")] = None,
    provider_concurrency: Annotated[list[str], typer.Option(help="PROVIDER=N: experiments at once of one provider "
                                                                 "(repeatable).")] = [],  # noqa: B006
    retry_failed: Annotated[bool, typer.Option(help="Run again repetitions whose experiment ended in an error "
                                                    "(infrastructure or provider; not an agent's own ending).")]
    = False,
    dry_run: Annotated[bool, typer.Option(help="Print what would run, start nothing.")] = False,
    by: Annotated[GroupBy, typer.Option(help="The final report: one row per maze family, or per maze.")]
    = GroupBy.family,
    quiet: Annotated[bool, typer.Option(help="No line per finished experiment.")] = False,
) -> None:
    """Run a sweep file's matrix of experiments, resuming: what already ended is skipped.

    Every experiment is tagged (comment sweep:ID, agent id ID/<cell>/r<n>). Prints a summary and the
    sweep's report at the end. Exit status 2 when an experiment's input was rejected, 3 when the spend limit
    left experiments unstarted, 130 when interrupted (run the same command again to go on).
    """
    from oriole_workstation import prompts
    from oriole_workstation.database import open_results

    spec = sweeps.load(file)
    results = open_results(aws)
    planned = sweeps.plan(spec, lambda key: getattr(results.store.find_maze(key), "name", None))
    if aws:
        import boto3

        sweeps.check_prompts(spec, prompts.aws_prompts(boto3.client("ssm")))
    else:
        sweeps.check_prompts(spec, prompts.local_prompts())
    caps = sweeps.provider_caps(spec, provider_concurrency, aws)
    todo = sweeps.pending(spec.id, planned, results.sweep_experiments(spec.id), retry_failed)
    skipped = len(planned) - len(todo)
    err.print(f"sweep {spec.id}: {len(planned)} experiments ({len(planned) // spec.repetitions} cells x "
              f"{spec.repetitions} repetitions), {skipped} already done, {len(todo)} to run", highlight=False,
              soft_wrap=True, markup=False)
    if dry_run:
        for item, open_row in todo:
            state = f" (open: experiment {open_row['id']})" if open_row else ""
            typer.echo(terminal_safe(f"{item.agent_id(spec.id)}  {item.cell.describe()} r{item.repetition}{state}"))
        return
    finished = _run(spec, todo, aws, state_machine_arn, stack, quiet,
                    concurrency=concurrency or spec.concurrency or (None if aws else sweeps.LOCAL_CONCURRENCY),
                    provider_concurrency=caps) if todo else []
    typer.echo(sweeps.summarize(finished, skipped, results.sweep_spend(spec.id)), nl=False)
    typer.echo(render_report(results, by=by, filters=Filters(tag=f"sweep:{spec.id}")), nl=False)
    if any(r.status == sweeps.REJECTED for r in finished):
        raise typer.Exit(2)
    if any(r.status == sweeps.NOT_STARTED for r in finished):  # only the spend limit leaves some unstarted
        raise typer.Exit(3)


def _run(spec: sweeps.SweepFile, todo: list[tuple[sweeps.Planned, dict | None]], aws: bool,
         state_machine_arn: str | None, stack: str, quiet: bool, *, concurrency: int | None,
         provider_concurrency: dict[str, int]) -> list[sweeps.Finished]:
    from oriole import db
    from oriole_workstation.cli.run import launcher_for
    from oriole_workstation.database import results_url
    from oriole_workstation.results import Results

    url = results_url(aws)
    bedrock = {"llmProvider": "bedrock", "config": {}} if any(i.cell.provider == "bedrock" for i, _ in todo) else {}
    with sweeps.Tracker(err, total=len(todo), show_lines=not quiet) as tracker, \
            launcher_for(aws, bedrock, stack=stack, state_machine_arn=state_machine_arn,
                         poll_seconds=None if aws else 0.1) as launcher:
        try:
            return sweeps.execute(spec.id, todo, launcher, lambda: Results(db.connect(url)), tracker,
                                  follows_open=aws, concurrency=concurrency,
                                  provider_concurrency=provider_concurrency, spend_limit=spec.spend_limit_usd,
                                  comment=spec.comment)
        except KeyboardInterrupt:
            err.print("interrupted: run the same command again to resume")
            raise typer.Exit(130) from None
