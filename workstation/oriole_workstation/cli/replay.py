"""``oriole replay``: play an experiment again against its own recorded answers and compare turn by turn
(``oriole_workstation.replay``)."""

from __future__ import annotations

from typing import Annotated

import typer

from oriole_workstation.cli.common import AwsDatabase, chosen_experiments, err, experiment_id, fail, print_json


def replay(
    experiment: Annotated[
        int | None, typer.Argument(help="Experiment id.", metavar="EXPERIMENT", parser=experiment_id)
    ] = None,
    sweep: Annotated[
        str | None, typer.Option("--sweep", metavar="ID", help="Replay every experiment of this sweep instead.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per experiment.")] = False,
    aws: AwsDatabase = False,
) -> None:
    """Run an experiment again through the same state machine and turn loop, each model call answered with the
    answer it stored (no model server, no network), into a scratch experiment, and compare turn by turn: the
    requests, the actions and their results, how it ended.

    Exit status: 0 when the replay is identical, 1 when it differs, 2 when the experiment cannot be replayed.
    """
    from oriole_workstation import replay as replays
    from oriole_workstation.cli.run import launcher_for

    results, chosen = chosen_experiments(experiment, sweep, "replay", aws)
    problems = {n: p for n in chosen if (p := results.store.replay_problem(n))}
    if sweep is None and problems:
        raise fail(f"experiment {experiment} cannot be replayed: {problems[chosen[0]]}")
    comparisons = []
    with launcher_for(aws, {"llmProvider": "replay"}) as launcher:
        for number in chosen:
            if number in problems:
                err.print(f"experiment {number} skipped: {problems[number]}", highlight=False, markup=False)
                continue
            result = launcher.follow(launcher.start({"replayOf": number}), results)
            replay_id = result.summary.experiment_id if result.summary else None
            if replay_id is None:
                raise fail(f"the replay of experiment {number} was refused: {result.as_json()['failure_reason']}", 1)
            comparison = replays.compare(
                replays.Stored.load(results.store.conn, number),
                replays.Stored.load(results.store.conn, replay_id),
                number,
                replay_id,
            )
            comparisons.append(comparison)
            if as_json:
                print_json(comparison.as_json())
            else:
                typer.echo(replays.describe(comparison))
    if sweep is not None and not as_json:
        same = sum(c.identical for c in comparisons)
        typer.echo(f"sweep {sweep}: {same} identical, {len(comparisons) - same} differ, {len(problems)} not replayable")
    raise typer.Exit(
        0 if comparisons and all(c.identical for c in comparisons) and not problems else 1 if comparisons else 2
    )
