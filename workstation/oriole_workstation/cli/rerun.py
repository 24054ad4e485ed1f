"""``oriole rerun``: new experiments with exactly what recorded ones ran with (``oriole_workstation.rerun``)."""

from __future__ import annotations

from typing import Annotated

import typer

from oriole_workstation.cli.common import (
    AwsDatabase,
    SweepFilter,
    chosen_experiments,
    err,
    experiment_id,
    fail,
    print_json,
    selection,
)


def rerun(
    experiments: Annotated[
        list[int] | None,
        typer.Argument(help="Experiment ids.", metavar="EXPERIMENT", parser=experiment_id, show_default=False),
    ] = None,
    sweep: SweepFilter = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per experiment.")] = False,
    any_build: Annotated[
        bool,
        typer.Option(
            "--any-build",
            help="Run on whatever build the model's server serves now, not only the one the experiment recorded.",
        ),
    ] = False,
    aws: AwsDatabase = False,
) -> None:
    """Start recorded experiments again, from their record.

    Each new experiment gets exactly the recorded configuration (the seed included), prompt text, maze and price,
    and asks its model again (compare them with `oriole report`; `oriole replay` checks the harness instead). An
    experiment whose prompt version no longer holds the recorded text is refused with the reason, and so is one
    whose model's server now reports another build than the recorded one (a tag pulled again): --any-build runs it
    on the build served now.

    The experiments are the EXPERIMENT ids and those of --sweep ID. Exit status: 0 when every rerun was started
    and ended, 1 when one failed to start or errored, 2 when one named alone cannot be rerun (several: those are
    skipped and counted).
    """
    from oriole_workstation import rerun as reruns
    from oriole_workstation.cli.prompts import prompt_store
    from oriole_workstation.cli.run import launcher_for

    filters = selection(ids=experiments, sweep=sweep)
    results, chosen = chosen_experiments(filters, "rerun", aws)
    stored = prompt_store(aws)
    inputs, problems = {}, {}
    for number in chosen:
        row = results.store.conn.execute(reruns.RECORD, (number,)).fetchone()
        assert row is not None, "chosen experiments exist"
        try:
            inputs[number] = reruns.execution_input(row, stored, any_build)
        except reruns.RerunRefused as refused:
            problems[number] = str(refused)
    if filters.fixed and len(chosen) == 1 and problems:
        raise fail(problems[chosen[0]])
    for problem in problems.values():
        err.print(f"skipped: {problem}", highlight=False, markup=False)
    started = 0
    # one launcher for all (locally: with a Bedrock client when any rerun needs one)
    needs = next((data for data in inputs.values() if data["llmProvider"] == "bedrock"), None)
    with launcher_for(aws, needs or {"llmProvider": "baseline", "config": {}}) as launcher:
        for number, data in inputs.items():
            result = launcher.follow(launcher.start(data), results)
            summary = result.as_json()
            started += summary["experiment_id"] is not None and summary["status"] != "failed"
            line = {
                "experiment_id": number,
                "rerun_id": summary["experiment_id"],
                "status": summary["status"],
                "failure_reason": summary["failure_reason"],
            }
            if as_json:
                print_json(line)
            else:
                reason = f" ({summary['failure_reason']})" if summary["failure_reason"] else ""
                new = summary["experiment_id"]  # None: refused before a row was written (another build served)
                rerun_as = f"rerun as {new}" if new is not None else "not rerun"
                typer.echo(f"experiment {number} {rerun_as}: {summary['status']}{reason}")
    if len(chosen) > 1 and not as_json:
        typer.echo(f"{filters.describe()}: {len(inputs)} rerun, {len(problems)} refused")
    raise typer.Exit(0 if inputs and started == len(inputs) and not problems else 1 if inputs else 2)
