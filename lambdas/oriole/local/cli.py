"""The ``oriole`` command: run experiments through the local state machine and inspect what it uses."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from oriole import catalog, mazeset
from oriole.baselines import BASELINE_NAMES
from oriole.config import parse_assignment
from oriole.errors import OrioleError
from oriole.maze import GOAL, WALL

app = typer.Typer(help="Run LLM maze experiments locally through the real state machine.", no_args_is_help=True)
mazes_app = typer.Typer(help="The maze set.", no_args_is_help=True)
db_app = typer.Typer(help="The experiments database.", no_args_is_help=True)
params_app = typer.Typer(help="The parameter catalog.", no_args_is_help=True)
prompts_app = typer.Typer(help="Prompt versions (local, or Parameter Store with --aws).", no_args_is_help=True)
app.add_typer(prompts_app, name="prompts")
app.add_typer(mazes_app, name="mazes")
app.add_typer(db_app, name="db")
app.add_typer(params_app, name="params")

out = Console()
err = Console(stderr=True)


def _print_columns(headers: tuple[str, ...], rows: list[tuple]) -> None:
    """Plain aligned columns: never truncated, easy to grep and to paste into an issue."""
    cells = [tuple(map(str, headers)), *(tuple(map(str, row)) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers) - 1)]
    for row in cells:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=False)) + "  " + row[-1])


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}")
    return typer.Exit(code)


def _real_bedrock_client(execution_input: dict):
    """A Bedrock client with the user's own AWS credentials, made before moto replaces them."""
    import boto3

    from oriole.providers.bedrock import runtime_client

    if boto3.Session().get_credentials() is None:
        raise _fail("--provider bedrock calls Amazon Bedrock with your AWS credentials, and none were found: "
                    "run `aws configure` or set AWS_PROFILE (and AWS_REGION) first")
    timeout = execution_input["config"].get("requestTimeoutSeconds", catalog.BY_KEY["requestTimeoutSeconds"].default)
    return runtime_client(float(timeout))


def _execution_input(maze: str, agent: str | None, provider: str | None, model: str | None, prompt: str,
                     config: list[str], max_moves: int | None, comment: str | None) -> dict:
    if agent and (provider or model):
        raise _fail("--agent is a baseline agent; use either --agent or --provider/--model")
    if provider and provider not in ("bedrock", "ollama"):
        raise _fail(f"--provider must be bedrock or ollama; got {provider!r}")
    if agent and agent not in BASELINE_NAMES:
        raise _fail(f"--agent must be one of {', '.join(BASELINE_NAMES)}; got {agent!r}")
    if not agent and not model:
        raise _fail("say what runs the maze: --agent NAME (a baseline) or --provider P --model M")
    try:
        overrides = dict(parse_assignment(item) for item in config)
    except OrioleError as error:
        raise _fail(str(error)) from None
    if max_moves is not None:
        overrides["maxMoves"] = max_moves
    execution_input = {"mazeId": maze, "llmProvider": "baseline" if agent else provider or "bedrock",
                       "modelName": agent or model, "promptVersion": prompt, "config": overrides}
    if comment:
        execution_input["comment"] = comment
    return execution_input


@app.command()
def run(
    maze: Annotated[str, typer.Option(help="Maze name or id (see `oriole mazes list`).")] = "perfect-11",
    agent: Annotated[str | None, typer.Option(help=f"Baseline agent: {', '.join(BASELINE_NAMES)}.")] = None,
    provider: Annotated[str | None, typer.Option(help="LLM provider: bedrock or ollama.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for the provider.")] = None,
    prompt: Annotated[str, typer.Option(help="Prompt version stored under /oriole/prompts/.")] = "v1",
    config: Annotated[list[str], typer.Option("--config", "-c", help="KEY=VALUE catalog override (repeatable).")]
    = [],  # noqa: B006 - typer reads the default, never mutates it
    max_moves: Annotated[int | None, typer.Option(help="Shorthand for --config maxMoves=N.")] = None,
    ollama_url: Annotated[str | None, typer.Option(help="Ollama endpoint (shorthand for --config endpoint=URL).")]
    = None,
    comment: Annotated[str | None, typer.Option(help="Free text stored on the experiment.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the summary.")] = False,
) -> None:
    """Run one experiment through the local state machine and print its result."""
    from oriole.local.database import local_url, prepare
    from oriole.local.runner import LocalAws

    if ollama_url:
        config = [*config, f"endpoint={ollama_url}"]
    execution_input = _execution_input(maze, agent, provider, model, prompt, config, max_moves, comment)
    bedrock = _real_bedrock_client(execution_input) if execution_input["llmProvider"] == "bedrock" else None
    url = local_url()
    store = prepare(url)
    with LocalAws(url, bedrock_client=bedrock) as aws:
        execution_arn = aws.start(execution_input)
        with ProgressLine(execution_input, disable=as_json) as show:
            result = aws.wait(execution_arn, store, show)
    data = result.as_json()
    if as_json:
        out.print_json(json.dumps(data))
    else:
        _print_result(data, execution_input)
    if result.summary is None:
        raise typer.Exit(2)


class ProgressLine:
    """A live line while the experiment runs: turn, actions against the limit, position."""

    def __init__(self, execution_input: dict, disable: bool):
        limit = execution_input["config"].get("maxMoves") or catalog.BY_KEY["maxMoves"].default
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"
                            " actions"), TimeElapsedColumn(), console=err, disable=disable, transient=True)
        self.task = self.bar.add_task("starting", total=limit)

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)

    def __call__(self, summary: dict) -> None:
        description = (f"experiment {summary['experiment_id']} · turn {summary['turns']} · "
                       f"position ({summary['current_x']}, {summary['current_y']})")
        self.bar.update(self.task, completed=summary["actions"], description=description)


def _print_result(data: dict, execution_input: dict) -> None:
    if data["experiment_id"] is None:
        raise _fail(f"the execution was rejected: {data['failure_reason']}")
    outcome = {"succeeded": "[green]goal found[/]", "timed_out": "[yellow]timed out[/]"}.get(
        data["status"], f"[red]{data['status']}[/]")
    table = Table(show_header=False, box=None)
    rows = [
        ("experiment", str(data["experiment_id"])),
        ("agent", f"{data['llm_provider']} / {data['model_name']}"),
        ("maze", f"{data['maze']} (shortest path {data['shortest_path_length']} moves)"),
        ("outcome", outcome),
        ("actions", f"{data['actions']} ({data['moves']} moves, {data['failed_moves']} into walls)"),
        ("turns", str(data["turns"])),
        ("path efficiency", "-" if data["path_efficiency"] is None else f"{data['path_efficiency']:.3f}"),
        ("duration", f"{data['duration_seconds']:.1f} s"),
    ]
    if data["failure_reason"]:
        rows.append(("reason", data["failure_reason"]))
    for key, value in rows:
        table.add_row(f"[bold]{key}[/]", value)
    out.print(table)
    out.print(f"\nQuery it: oriole db psql -c \"SELECT step_number, action_type, to_x, to_y, success "
              f"FROM actions WHERE experiment_id = {data['experiment_id']} ORDER BY step_number\"", soft_wrap=True)


@mazes_app.command("list")
def mazes_list() -> None:
    """Every maze of the set with its size and shortest path."""
    _print_columns(("id", "name", "size", "start", "goal", "shortest path", "generator", "seed"), [
        (e.id, e.name, f"{e.maze.width}x{e.maze.height}", "{},{}".format(*e.maze.start), "{},{}".format(*e.maze.goal),
         e.shortest_path_length, e.generator, e.seed) for e in mazeset.maze_set()])


def draw(maze) -> str:
    """The maze as text: ``#`` wall, ``.`` open, ``S`` start, ``G`` goal."""
    lines = []
    for y, row in enumerate(maze.grid):
        chars = ["#" if c == WALL else "G" if c == GOAL else "." for c in row]
        if y == maze.start[1]:
            chars[maze.start[0]] = "S"
        lines.append("".join(chars))
    return "\n".join(lines)


@mazes_app.command("show")
def mazes_show(name: str) -> None:
    """Draw one maze in the terminal."""
    try:
        entry = mazeset.get_maze(name)
    except mazeset.UnknownMaze as error:
        raise _fail(str(error)) from None
    out.print(f"{entry.name}: {entry.maze.width}x{entry.maze.height}, start {entry.maze.start}, "
              f"goal {entry.maze.goal}, shortest path {entry.shortest_path_length}, hash {entry.content_hash[:12]}")
    out.print(draw(entry.maze), highlight=False, markup=False)


@mazes_app.command("load")
def mazes_load() -> None:
    """Migrate the database and load the maze set (idempotent)."""
    from oriole.local.database import local_url, prepare

    prepare(local_url())
    out.print(f"{len(mazeset.maze_set())} mazes loaded")


@db_app.command("url")
def db_url() -> None:
    """A connection URL for psql: ``psql "$(oriole db url)"``."""
    from oriole.local.database import local_url

    print(local_url())


@db_app.command("psql", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def db_psql(ctx: typer.Context) -> None:
    """Open psql on the experiments database (extra arguments go to psql, e.g. ``-c "SELECT ..."``).

    Uses the psql on PATH, else the one that ships inside the embedded server's package.
    """
    import os
    import shutil

    from oriole.local.database import local_url

    url = local_url()
    psql = shutil.which("psql")
    if psql is None:
        from pgserver._commands import POSTGRES_BIN_PATH

        psql = str(POSTGRES_BIN_PATH / "psql")
    sys.stdout.flush()
    os.execv(psql, [psql, url, *ctx.args])


@db_app.command("migrate")
def db_migrate() -> None:
    """Apply pending migrations and load the maze set."""
    from oriole.local.database import local_url, prepare

    prepare(local_url())
    out.print("database is up to date")


@params_app.command("list")
def params_list() -> None:
    """The parameter catalog: names, defaults, the config key that overrides each, and when it is read."""
    rows = [(p.name, p.default, p.key if p.overridable else "-", p.read_at, p.description) for p in catalog.CATALOG]
    rows += [(catalog.prompt_name(v), "(shipped)", "promptVersion", "start", "System prompt text")
             for v in catalog.SHIPPED_PROMPT_VERSIONS]
    _print_columns(("name", "default", "config key", "read at", "description"), rows)


AwsOption = Annotated[bool, typer.Option("--aws", help="Use Parameter Store of your AWS account instead.")]


def _prompt_store(aws: bool) -> dict[str, str]:
    from oriole.local import prompts

    if aws:
        import boto3

        return prompts.aws_prompts(boto3.client("ssm"))
    return prompts.local_prompts()


@prompts_app.command("list")
def prompts_list(aws: AwsOption = False) -> None:
    """Every prompt version with its size and hash (the hash stored on each experiment)."""
    _print_columns(("version", "bytes", "sha256", "first line"), [
        (v, len(t.encode()), catalog.prompt_hash(t)[:16], t.strip().splitlines()[0][:60])
        for v, t in sorted(_prompt_store(aws).items())])


@prompts_app.command("show")
def prompts_show(version: str, aws: AwsOption = False) -> None:
    """Print one prompt version."""
    from oriole.local import prompts

    try:
        text = prompts.get(_prompt_store(aws), version)
    except OrioleError as error:
        raise _fail(str(error)) from None
    print(text, end="" if text.endswith("\n") else "\n")


@prompts_app.command("put")
def prompts_put(version: str, file: Annotated[typer.FileText, typer.Option("--file", "-f", help="Prompt text file.")],
                aws: AwsOption = False) -> None:
    """Store a prompt version; experiments pick it with promptVersion (or `oriole run --prompt`)."""
    from oriole.local import prompts

    text = file.read()
    try:
        if aws:
            import boto3

            prompts.put_aws(boto3.client("ssm"), version, text)
        else:
            prompts.put_local(version, text)
    except ValueError as error:
        raise _fail(str(error)) from None
    where = "Parameter Store" if aws else "the local prompt folder"
    size, digest = len(text.encode()), catalog.prompt_hash(text)[:16]
    out.print(f"prompt {version} stored in {where} ({size} bytes, sha256 {digest})")


def main() -> None:
    try:
        app()
    except OrioleError as error:
        err.print(f"[bold red]{type(error).__name__}:[/] {error}")
        sys.exit(2)
