"""``oriole report``: compare the stored experiments as a table, CSV, JSON, an HTML page (with its animations), or
Markdown and LaTeX tables for a paper.

The logic lives in ``oriole_workstation.report``, ``report_html`` and ``paper_tables`` (free of the CLI library);
this command only reads options, opens the database and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oriole_workstation import files, paper_tables, report_html
from oriole_workstation.cli.common import (
    AgentFilter,
    AwsDatabase,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SinceFilter,
    SweepFilter,
    TagFilter,
    UntilFilter,
    err,
    fail,
    old_spelling,
    opened,
    renamed_flag,
    selection,
    terminal_width,
)
from oriole_workstation.cli.render import run_to_draw
from oriole_workstation.display import terminal_safe, wrote
from oriole_workstation.files import OutputRefused
from oriole_workstation.render import write
from oriole_workstation.report import Format, GroupBy, render_pairs, render_report
from oriole_workstation.results import Filters, Results

ANIMATIONS = "animations"  # the folder beside an HTML report that holds its animations


def report(
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    prompt: PromptFilter = None,
    maze: MazeFilter = None,
    since: SinceFilter = None,
    until: UntilFilter = None,
    tag: TagFilter = None,
    by: Annotated[GroupBy, typer.Option(help="One row per maze family, or per maze.")] = GroupBy.family,
    output: Annotated[
        Format,
        typer.Option(
            "--format",
            help="table, csv, json, html, or markdown and latex (booktabs): the leaderboard and the comparison "
            "with n, successes, both intervals and the provenance in each caption.",
        ),
    ] = Format.table,
    file: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file instead of printing.")
    ] = None,
    with_animations: Annotated[
        bool,
        typer.Option(
            "--with-animations",
            help="With --format html -o FILE: render each experiment's animation "
            "into animations/ beside the page and link it.",
        ),
    ] = False,
    with_replays: Annotated[bool, renamed_flag("--with-replays")] = False,
    pivot: Annotated[
        bool,
        typer.Option(
            "--pivot",
            help="The leaderboard instead of the table: one row per agent, one column per family and size (or maze).",
        ),
    ] = False,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Every column (prompt, mazes, maze CI, efficiency, cost per "
            "success; with --pivot every panel in one table, "
            "configurations in full) however wide the table gets.",
        ),
    ] = False,
    paired: Annotated[
        bool,
        typer.Option(
            "--pairs",
            help="Paired comparisons instead of the groups: every two agents of the same mazes over the runs they "
            "share (same maze and seed), the difference in success with a paired bootstrap interval over mazes, "
            "the exact McNemar test and Holm-corrected p-values (table, csv, json; the HTML page has them too).",
        ),
    ] = False,
    figures: Annotated[
        Path | None,
        typer.Option(
            "--figures",
            metavar="DIR",
            help="Also write each chart into this folder as an "
            "SVG (and a PNG) sized for a paper column, with captions.md.",
        ),
    ] = None,
    aws: AwsDatabase = False,
) -> None:
    """Compare models, prompts and settings.

    As a table, CSV, JSON, a self-contained HTML page, or Markdown and LaTeX tables a paper can take.

    Every run ends in one of success, agent failure, censored (the wall clock, a timeout, a stop, a spend cap)
    or error; a repetition counts once (its decided attempt, when an errored one was run again). Per group: the
    success rate over the decided runs and over all runs, each with its 95% interval (over mazes where the runs
    share mazes, Wilson's with --wide), the count of each ending, SPL and the medians of the successes, tokens
    and cost over every attempt ("unpriced" where a model has no price), and flags: m fewer than 10 mazes, u
    over 5% censored or errored, $ some runs unpriced, c a confound. Each row is one agent x prompt x maze
    family (or maze with --by maze) x the configuration values that differ among the compared experiments.
    --pairs compares every two agents over the runs they share. --pivot prints the leaderboard:
    the success rate with its interval per agent and family and size. The HTML page starts with that
    leaderboard and its provenance (database, sweeps, code versions, prompts, seeds, the query), then draws
    the charts (success rates with their intervals, efficiency, actions and tokens, cost) per family and size,
    and lists every experiment it counts. --format markdown and --format latex write the leaderboard, the
    comparison and the paired comparisons (with --pairs, those alone) as captioned tables (LaTeX: booktabs
    rules, needs booktabs and graphicx), each caption ending with the provenance of its numbers.

    Repeat a filter for any of its values (--sweep a --sweep b); different filters must all hold. A value that
    matches no experiment is refused (exit status 2) with the closest values that exist.
    """
    with_animations = with_animations or old_spelling(with_replays, "--with-replays", "--with-animations")
    if with_animations and (output is not Format.html or file is None):
        raise fail("--with-animations writes animations beside the page: use it with --format html -o FILE")
    if pivot and output is not Format.table:
        raise fail(
            "--pivot prints the leaderboard as a table: use it without --format (the HTML page has it "
            "first; CSV and JSON carry every column)"
        )
    if paired and pivot:
        raise fail("--pairs prints the paired comparisons, not the leaderboard: use it without --pivot")
    filters = selection(
        sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt, tag=tag, since=since, until=until
    )
    results = opened(filters, aws)
    animations = write_animations(results, filters, file.parent) if with_animations and file is not None else None
    if output is Format.html:
        text = report_html.render(results, by, filters, animations)
    elif output in (Format.markdown, Format.latex):
        text = paper_tables.render_report(results, paper_tables.Markup(output.value), by, filters, paired)
    elif paired:
        text = render_pairs(results, output, by, filters, terminal_width() if file is None else None)
    else:
        text = render_report(results, output, by, filters, pivot, wide, terminal_width() if file is None else None)
    if figures is not None:
        written = report_html.write_figures(results, by, filters, figures)
        err.print(
            terminal_safe(f"wrote {len(written)} files in {figures}")
            if written
            else "no figures: no experiment matches",
            highlight=False,
            markup=False,
        )
    if file is None:
        typer.echo(text, nl=False)
        return
    files.write_text(file, text, OutputRefused)
    err.print(
        wrote(file, f" and {len(animations)} animations in {file.parent / ANIMATIONS}" if animations else ""),
        highlight=False,
        markup=False,
    )


def write_animations(results: Results, filters: Filters, folder: Path) -> dict[int, str]:
    """Each experiment of the report as an HTML animation in ``folder/animations``; experiment id -> relative link."""
    files.make_folder(folder / ANIMATIONS, OutputRefused, "--with-animations")
    links = {}
    for row in results.compared(filters):
        record = results.experiment_run(row.experiment_id)
        if record is None:  # deleted since the comparison was read: nothing to draw
            continue
        name = f"{ANIMATIONS}/experiment-{row.experiment_id}.html"
        write(run_to_draw(results, row.experiment_id, record), [folder / name])
        links[row.experiment_id] = name
    return links
