"""``oriole replay``: play an experiment again against its own recorded answers and compare turn by turn
(``oriole_workstation.replay``)."""

from __future__ import annotations

from typing import Annotated

import typer

from oriole_workstation.cli.common import (
    AgentFilter,
    AwsDatabase,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SweepFilter,
    chosen_experiments,
    err,
    experiment_id,
    fail,
    print_json,
    selection,
)


def replay(
    experiments: Annotated[
        list[int] | None,
        typer.Argument(help="Experiment ids.", metavar="EXPERIMENT", parser=experiment_id, show_default=False),
    ] = None,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per experiment.")] = False,
    aws: AwsDatabase = False,
) -> None:
    """Replay experiments against their recorded answers.

    Each experiment runs again through the same state machine and turn loop, each model call answered with the
    answer it stored (no model server, no network), into scratch experiments, and compare turn by turn: the
    requests, the actions and their results, how each ended.

    The experiments are the EXPERIMENT ids and those the filters choose (every experiment of --sweep ID, ...;
    repeat a filter for any of its values). Exit status: 0 when every replay is identical, 1 when one differs,
    2 when one experiment named alone cannot be replayed (several: those are skipped and counted).
    """
    from oriole.providers.replay import RecordUnreadable
    from oriole_workstation import replay as replays
    from oriole_workstation.cli.run import launcher_for

    filters = selection(ids=experiments, sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt)
    results, chosen = chosen_experiments(filters, "replay", aws)
    problems = {n: p for n in chosen if (p := results.store.replay_problem(n))}
    alone = filters.fixed and len(chosen) == 1
    if alone and problems:
        raise fail(f"experiment {chosen[0]} cannot be replayed: {problems[chosen[0]]}")
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
            reason = str(result.as_json()["failure_reason"] or "")
            if reason.startswith(f"{RecordUnreadable.__name__}:"):  # the original's rows, not the harness
                if alone:
                    raise fail(f"experiment {number} cannot be replayed: {reason}")
                problems[number] = reason
                err.print(f"experiment {number} skipped: {reason}", highlight=False, markup=False)
                continue
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
    if not alone and not as_json:
        same = sum(c.identical for c in comparisons)
        typer.echo(
            f"{filters.describe()}: {same} identical, {len(comparisons) - same} differ, {len(problems)} not replayable"
        )
    raise typer.Exit(
        0 if comparisons and all(c.identical for c in comparisons) and not problems else 1 if comparisons else 2
    )
