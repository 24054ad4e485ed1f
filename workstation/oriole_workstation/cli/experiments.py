"""``oriole experiments archive|restore|delete``: keep exploratory runs out of reports, or remove them."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from oriole_workstation.cli.common import (
    AgentFilter,
    AwsDatabase,
    Commands,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SweepFilter,
    TagFilter,
    chosen_experiments,
    experiment_id,
    fail,
    out,
    selection,
)
from oriole_workstation.results import Filters

app = Commands(
    help="Archive, restore or delete experiments.\n\nKeep experiments out of reports and exports (archive), bring "
    "them back (restore), or delete them.",
    no_args_is_help=True,
)
Ids = Annotated[
    list[int] | None,
    typer.Argument(help="Experiment ids.", metavar="ID", parser=experiment_id, show_default=False),
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking (for scripts).")]


def _filters(
    ids: list[int] | None,
    tag: list[str] | None,
    sweep: list[str] | None,
    model: list[str] | None,
    agent: list[str] | None,
    maze: list[str] | None,
    prompt: list[str] | None,
) -> Filters:
    return selection(ids=ids, sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt, tag=tag)


def _listed(changed: list[int]) -> str:
    return ", ".join(map(str, changed[:20])) + (f" and {len(changed) - 20} more" if len(changed) > 20 else "")


def _said(verb: str, changed: list[int]) -> None:
    out.print(
        f"{verb} {len(changed)} experiment(s)" + (f": {_listed(changed)}" if changed else ""),
        markup=False,
        highlight=False,
    )


@app.command("archive")
def archive(
    ids: Ids = None,
    tag: TagFilter = None,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    aws: AwsDatabase = False,
) -> None:
    """Keep experiments out of every report.

    They leave every report, comparison and export; their rows stay (restore brings them back, `oriole ls`
    still lists them). The experiments are the IDs and those the filters choose."""
    filters = _filters(ids, tag, sweep, model, agent, maze, prompt)
    results, _ = chosen_experiments(filters, "archive", aws)
    _said("archived", results.set_archived(filters, archived=True))


@app.command("restore")
def restore(
    ids: Ids = None,
    tag: TagFilter = None,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    aws: AwsDatabase = False,
) -> None:
    """Bring archived experiments back into reports.

    The experiments are the IDs and those the filters choose."""
    filters = _filters(ids, tag, sweep, model, agent, maze, prompt)
    results, _ = chosen_experiments(filters, "restore", aws)
    _said("restored", results.set_archived(filters, archived=False))


@app.command("delete")
def delete(
    ids: Ids = None,
    tag: TagFilter = None,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    yes: Yes = False,
) -> None:
    """Delete experiments and every row they hold.

    From the local database, with their turns, actions and model calls, and the replays of them (never a running
    one), once you say yes (--yes: without asking); a sweep's spend limit still counts what they spent. The
    deployed database is not deleted from here: archive there instead (archive --aws). The experiments are the
    IDs and those the filters choose."""
    filters = _filters(ids, tag, sweep, model, agent, maze, prompt)
    results, chosen = chosen_experiments(filters, "delete", False)
    if running := sorted(row.experiment_id for row in results.status(filters, running=True)):
        raise fail(
            f"experiment(s) {_listed(running)} still running: stop them (or wait for them to end) first; "
            "nothing was deleted"
        )
    if not yes:
        question = f"delete {len(chosen)} experiment(s) ({_listed(chosen)}) and every row they hold?"
        if not sys.stdin.isatty():
            raise fail(f"{question} Nothing was deleted: add --yes to delete without asking")
        if not typer.confirm(question, default=False, err=True):
            raise fail("nothing was deleted", 1)
    _said("deleted", results.delete(filters))
