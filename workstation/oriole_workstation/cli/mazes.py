"""``oriole mazes``: the maze set, listed, drawn in the terminal, loaded into the database."""

from __future__ import annotations

from oriole import mazeset
from oriole.maze import GOAL, WALL, Maze
from oriole_workstation.cli.common import Commands, out, print_columns

app = Commands(help="The maze set.", no_args_is_help=True)


@app.command("list")
def mazes_list() -> None:
    """Every maze of the set with its size and shortest path."""
    print_columns(("id", "name", "size", "start", "goal", "shortest path", "generator", "seed"), [
        (e.id, e.name, f"{e.maze.width}x{e.maze.height}", "{},{}".format(*e.maze.start), "{},{}".format(*e.maze.goal),
         e.shortest_path_length, e.generator, e.seed) for e in mazeset.maze_set()])


def draw(maze: Maze) -> str:
    """The maze as text: ``#`` wall, ``.`` open, ``S`` start, ``G`` goal."""
    lines = []
    for y, row in enumerate(maze.grid):
        chars = ["#" if c == WALL else "G" if c == GOAL else "." for c in row]
        if y == maze.start[1]:
            chars[maze.start[0]] = "S"
        lines.append("".join(chars))
    return "\n".join(lines)


@app.command("show")
def mazes_show(name: str) -> None:
    """Draw one maze in the terminal."""
    entry = mazeset.get_maze(name)
    out.print(f"{entry.name}: {entry.maze.width}x{entry.maze.height}, start {entry.maze.start}, "
              f"goal {entry.maze.goal}, shortest path {entry.shortest_path_length}, hash {entry.content_hash[:12]}")
    out.print(draw(entry.maze), highlight=False, markup=False)


@app.command("load")
def mazes_load() -> None:
    """Migrate the database and load the maze set (idempotent)."""
    from oriole_workstation.database import local_url, prepare

    prepare(local_url())
    out.print(f"{len(mazeset.maze_set())} mazes loaded")

