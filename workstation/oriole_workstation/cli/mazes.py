"""``oriole mazes``: the mazes the database holds (families, sizes, counts), one drawn in the terminal,
mazes imported from files, and the shipped set loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oriole.core import mazeset
from oriole.core.maze import GOAL, WALL, Maze, Position
from oriole.text import ascii_int
from oriole_workstation.cli.common import AwsDatabase, Commands, fail, out, print_columns

app = Commands(
    help="Mazes: shipped, seeded and imported.\n\nThe shipped set, seeded families (FAMILY-SIZE@SEED) and imported "
    "mazes.",
    no_args_is_help=True,
)


@app.command("list")
def mazes_list(aws: AwsDatabase = False) -> None:
    """Families and sizes of the stored mazes.

    How many of each the database holds, and where they come from.
    """
    from oriole_workstation.database import open_results

    rows = open_results(aws).maze_counts()
    print_columns(
        ("family", "size", "mazes", "shipped", "generated", "imported", "names"),
        [
            (
                r.family,
                f"{r.width}x{r.height}",
                r.mazes,
                r.shipped,
                r.generated,
                r.imported,
                ", ".join(r.names) + (", ..." if r.mazes > len(r.names) else ""),
            )
            for r in rows
        ],
    )
    out.print(
        f"\nSeeded names FAMILY-SIZE@SEED draw a new maze of a family on first use; families: "
        f"{', '.join(mazeset.FAMILIES)}.",
        markup=False,
        highlight=False,
    )


def draw(maze: Maze) -> str:
    """The maze as text: ``#`` wall, ``.`` open, ``S`` start, ``G`` goal (what ``mazes import`` reads)."""
    lines = []
    for y, row in enumerate(maze.grid):
        chars = ["#" if c == WALL else "G" if c == GOAL else "." for c in row]
        if y == maze.start[1]:
            chars[maze.start[0]] = "S"
        lines.append("".join(chars))
    return "\n".join(lines)


@app.command("show")
def mazes_show(name: str, aws: AwsDatabase = False) -> None:
    """Draw one maze in the terminal.

    A stored one by name or id, or the maze a seeded name stands for.
    """
    from oriole_workstation.database import open_results

    stored = open_results(aws).store.find_maze(name)
    maze, length, digest = (stored.maze, stored.shortest_path_length, stored.content_hash) if stored else _drawn(name)
    out.print(
        f"{name}: {maze.width}x{maze.height}, start {maze.start}, goal {maze.goal}, shortest path {length}, "
        f"hash {digest[:12]}" + ("" if stored else " (not stored yet)"),
        markup=False,
        highlight=False,
    )
    out.print(draw(maze), highlight=False, markup=False)


def _drawn(name: str) -> tuple[Maze, int, str]:
    entry = mazeset.seeded(name)
    return entry.maze, entry.shortest_path_length, entry.content_hash


def _point(value: str | None, option: str) -> Position | None:
    if value is None:
        return None
    x, sep, y = value.partition(",")
    px, py = (ascii_int(x.strip(), 3, signed=False), ascii_int(y.strip(), 3, signed=False)) if sep else (None, None)
    if px is None or py is None or max(px, py) >= mazeset.MAX_SIZE:
        raise fail(f"{option} expects X,Y: two whole numbers from 0 to {mazeset.MAX_SIZE - 1}; got {value!r:.60}")
    return px, py


@app.command("import")
def mazes_import(
    file: Annotated[
        Path,
        typer.Argument(
            help="A JSON grid (grid or grid_data; 0 open, 1 wall, 2 goal) or a text "
            "grid (# wall, . open, S start, G goal)."
        ),
    ],
    name: Annotated[str | None, typer.Option(help="The maze's name (default: the file's name field or stem).")] = None,
    start: Annotated[
        str | None, typer.Option(metavar="X,Y", help="Start tile X,Y (required when the file gives none).")
    ] = None,
    goal: Annotated[str | None, typer.Option(metavar="X,Y", help="Goal tile X,Y (when the grid marks none).")] = None,
    aws: AwsDatabase = False,
) -> None:
    """Store a maze from a file, checked playable.

    Importing the same grid again changes nothing.
    """
    from oriole_workstation import mazefiles
    from oriole_workstation.database import open_results

    entry = mazefiles.read(file, name, _point(start, "--start"), _point(goal, "--goal"))
    store = open_results(aws).store
    existing = store.maze_with_grid(entry.content_hash)
    if existing is not None:
        out.print(f"already stored as {existing.name} (id {existing.id}): nothing imported", markup=False)
        return
    taken = store.find_maze(entry.name)
    if taken is not None:
        raise fail(
            f"the name {entry.name} is taken by another maze (id {taken.id}, {taken.maze.width}x"
            f"{taken.maze.height}, another grid): choose another with --name"
        )
    stored = store.add_maze(entry, mazefiles.IMPORTED)
    maze = stored.maze
    out.print(
        f"imported {stored.name} (id {stored.id}): {maze.width}x{maze.height}, start {maze.start}, goal "
        f"{maze.goal}, shortest path {stored.shortest_path_length}. Run it: oriole run --maze {stored.name}",
        markup=False,
        highlight=False,
    )


@app.command("load")
def mazes_load() -> None:
    """Migrate the database and load the shipped set (idempotent)."""
    from oriole_workstation.database import local_url, prepare

    prepare(local_url())
    out.print(f"{len(mazeset.maze_set())} shipped mazes loaded")
