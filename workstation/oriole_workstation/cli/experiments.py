"""``oriole experiments archive|restore|delete``: keep exploratory runs out of reports, or remove them."""

from __future__ import annotations

from typing import Annotated

import typer

from oriole_workstation.cli.common import AwsDatabase, Commands, SweepFilter, TagFilter, experiment_id, fail, out

app = Commands(
    help="Keep experiments out of reports and exports (archive), bring them back (restore), or delete them.",
    no_args_is_help=True,
)
Ids = Annotated[
    list[int] | None, typer.Argument(help="Experiment ids.", metavar="ID...", parser=experiment_id, show_default=False)
]


def _chosen(ids: list[int] | None, tag: str | None, sweep: str | None) -> tuple[list[int], str | None, str | None]:
    """What the command acts on: ids, the experiments whose comment has --tag, those --sweep started."""
    if not ids and tag is None and sweep is None:
        raise fail("say which experiments: their ids, --tag T or --sweep ID")
    return list(ids or []), tag, sweep


def _said(verb: str, changed: list[int]) -> None:
    shown = ", ".join(map(str, changed[:20])) + (f" and {len(changed) - 20} more" if len(changed) > 20 else "")
    out.print(f"{verb} {len(changed)} experiment(s)" + (f": {shown}" if changed else ""), markup=False, highlight=False)


@app.command("archive")
def archive(ids: Ids = None, tag: TagFilter = None, sweep: SweepFilter = None, aws: AwsDatabase = False) -> None:
    """Keep experiments out of every report, comparison and export; their rows stay (``restore`` brings them
    back, ``oriole ls`` still lists them)."""
    from oriole_workstation.database import open_results

    _said("archived", open_results(aws).set_archived(*_chosen(ids, tag, sweep), archived=True))


@app.command("restore")
def restore(ids: Ids = None, tag: TagFilter = None, sweep: SweepFilter = None, aws: AwsDatabase = False) -> None:
    """Bring archived experiments back into reports and exports."""
    from oriole_workstation.database import open_results

    _said("restored", open_results(aws).set_archived(*_chosen(ids, tag, sweep), archived=False))


@app.command("delete")
def delete(ids: Ids = None, tag: TagFilter = None, sweep: SweepFilter = None) -> None:
    """Delete experiments of the local database with their turns, actions and model calls, and the replays of
    them (never a running one). A sweep's spend limit still counts what they spent. The deployed database is not
    deleted from here: archive there instead (``archive --aws``)."""
    from oriole_workstation.database import open_results

    _said("deleted", open_results(False).delete(*_chosen(ids, tag, sweep)))
