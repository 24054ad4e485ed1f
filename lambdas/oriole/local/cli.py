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
from oriole.local import render, report, sweep
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
    aws: Annotated[bool, typer.Option("--aws", help="Start it on the deployed state machine instead.")] = False,
) -> None:
    """Run one experiment through the local state machine (or the deployed one) and print its result."""
    from oriole.local.database import local_url, prepare
    from oriole.local.runner import LocalAws

    if ollama_url:
        config = [*config, f"endpoint={ollama_url}"]
    execution_input = _execution_input(maze, agent, provider, model, prompt, config, max_moves, comment)
    if aws:
        _run_on_aws(execution_input, as_json)
        return
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


def _aws_clients():
    import boto3

    return boto3.client("cloudformation"), boto3.client("stepfunctions")


def _run_on_aws(execution_input: dict, as_json: bool) -> None:
    """Start the execution on the deployed state machine and follow it (and its successors) to the end."""
    from oriole.local import cloud

    cloudformation, sfn = _aws_clients()
    try:
        state_machine = cloud.stack_outputs(cloudformation)["StateMachineArn"]
    except cloud.DeploymentNotFound as error:
        raise _fail(str(error)) from None
    execution_arn = cloud.start(sfn, state_machine, execution_input)
    if not as_json:
        err.print(f"started {execution_arn}")
    last = cloud.follow(sfn, execution_arn, lambda d: None if as_json else err.print(
        f"{d['executionArn'].rsplit(':', 1)[-1]}: {d['status']}", highlight=False))
    data = {"execution_arn": execution_arn, "last_execution_arn": last["executionArn"], "status": last["status"],
            "error": last.get("error"), "cause": last.get("cause")}
    if as_json:
        out.print_json(json.dumps(data))
    else:
        out.print(f"execution {last['status']}. The experiment's outcome: `oriole status {execution_arn}`"
                  " (with DATABASE_URL pointing at the deployed database through the port forward).")
    if last["status"] != "SUCCEEDED":
        raise typer.Exit(1)


@app.command()
def status(
    target: Annotated[str, typer.Argument(help="An experiment id, or an execution ARN.")],
    aws: Annotated[bool, typer.Option("--aws", help="Also describe the executions on AWS.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Where an experiment is: its row in the database and, with --aws, the state of its executions."""
    from oriole import db
    from oriole.local.database import local_url
    from oriole.store import Store

    store = Store(db.connect(local_url()))
    if target.isdigit():
        row = store.summary(int(target))
    else:
        found = store.experiment_for_execution(target, None)
        row = store.summary(found["id"]) if found else None
    executions = []
    if aws:
        _, sfn = _aws_clients()
        arns = row["execution_arns"] if row else [target]
        executions = [{k: d.get(k) for k in ("executionArn", "status", "startDate", "stopDate", "error", "cause")}
                      for d in (sfn.describe_execution(executionArn=arn) for arn in arns)]
    if row is None and not executions:
        raise _fail(f"no experiment {target} in the database (set DATABASE_URL for the deployed one)")
    if as_json:
        out.print_json(json.dumps({"experiment": row, "executions": executions}, default=str))
        return
    if row:
        _print_columns(("field", "value"), [(k, v) for k, v in row.items() if k != "execution_arns"])
    for execution in executions:
        print(f"{execution['executionArn']}: {execution['status']}" + (
            f" ({execution['error']}: {execution['cause']})" if execution.get("error") else ""))


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
def params_list(aws: Annotated[bool, typer.Option("--aws", help="Show the values deployed in Parameter Store.")]
                = False) -> None:
    """The parameter catalog: names, defaults (or deployed values), config keys, and when each is read."""
    values = {}
    if aws:
        import boto3

        from oriole.local import cloud

        values = cloud.parameter_values(boto3.client("ssm"))
    rows = [(p.name, values.get(p.name, "(not deployed)") if aws else p.default, p.key if p.overridable else "-",
             p.read_at, p.description) for p in catalog.CATALOG]
    rows += [(catalog.prompt_name(v), "(shipped)", "promptVersion", "start", "System prompt text")
             for v in catalog.SHIPPED_PROMPT_VERSIONS]
    _print_columns(("name", "default", "config key", "read at", "description"), rows)


@params_app.command("set")
def params_set(name: str, value: str,
               aws: Annotated[bool, typer.Option("--aws", help="Required: set it in your account.")] = False) -> None:
    """Set a parameter in Parameter Store (checked against the catalog first). Locally, use --config."""
    if not aws:
        raise _fail("locally every run seeds Parameter Store from the catalog: override a value for one run "
                    "with `oriole run --config KEY=VALUE`, or pass --aws to change the deployed value")
    import boto3

    from oriole.local import cloud

    try:
        full_name = cloud.set_parameter(boto3.client("ssm"), name, value)
    except OrioleError as error:
        raise _fail(str(error)) from None
    out.print(f"{full_name} = {value} (new experiments snapshot it when they start)")


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


LOCAL_ZOMBIE_CAUSE = "no oriole run process holds it: the process that ran the local execution ended"


def _zombies(store, aws: bool) -> list[tuple[dict, dict]]:
    """Open experiments nothing runs any more, each with the status-change detail that closes it.

    Locally an execution lives only in the process that started it (``oriole run``, a sweep, a test),
    which holds every experiment it runs; an open experiment of a local execution that no live process
    holds is a zombie. With ``--aws``: an open experiment whose latest execution is not RUNNING.
    """
    from oriole.handlers.execution_status import status_change_detail
    from oriole.local.runner import EXECUTION_PREFIX

    if not aws:
        return [(row, {"executionArn": row["last_execution"], "name": row["last_execution"].rsplit(":", 1)[-1],
                       "status": "ABORTED", "cause": LOCAL_ZOMBIE_CAUSE})
                for row in store.open_experiments(EXECUTION_PREFIX) if not row["held"]]
    import boto3

    sfn = boto3.client("stepfunctions")
    zombies = []
    for row in store.open_experiments():
        if row["last_execution"].startswith(EXECUTION_PREFIX):
            continue
        try:
            execution = sfn.describe_execution(executionArn=row["last_execution"])
        except (sfn.exceptions.ExecutionDoesNotExist, sfn.exceptions.InvalidArn):
            execution = {"executionArn": row["last_execution"], "name": row["last_execution"].rsplit(":", 1)[-1],
                         "status": "ABORTED", "cause": "Step Functions has no such execution (any more)"}
        if execution["status"] != "RUNNING":
            zombies.append((row, status_change_detail(execution)))
    return zombies


@app.command()
def doctor(
    fix: Annotated[bool, typer.Option("--fix", help="Close them, as the status-change finalizer does.")] = False,
    aws: Annotated[bool, typer.Option("--aws", help="Judge experiments run on AWS by their executions in your "
                                                    "account (DATABASE_URL points at that database).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """List experiments left open although no execution runs them any more; --fix closes them.

    Locally: open experiments of local executions that no live `oriole run` process holds. With --aws:
    open experiments whose latest execution is no longer RUNNING. --fix closes each through the
    status-change finalizer (status, completed_at and a failure reason naming the execution).
    """
    from oriole import db, experiments
    from oriole.handlers.execution_status import execution_status
    from oriole.local.database import local_url
    from oriole.store import Store

    found = []
    with db.connect(local_url()) as conn:
        store = Store(conn)
        for row, detail in _zombies(store, aws):
            item = {**row, "started_at": row["started_at"].isoformat(timespec="seconds"),
                    "last_turn_at": row["last_turn_at"] and row["last_turn_at"].isoformat(timespec="seconds"),
                    "execution_status": detail["status"], "cause": detail.get("cause") or detail.get("error"),
                    "closed": False, "failure_reason": None}
            del item["held"]
            if fix:
                closed = experiments.close_after_execution(detail, store, execution_status)
                item.update(closed=closed["closed"], failure_reason=closed["failureReason"])
            found.append(item)
    if as_json:
        out.print_json(json.dumps({"zombies": found, "fixed": fix}))
        return
    if not found:
        out.print("no open experiment without a running execution")
        return
    _print_columns(("experiment", "maze", "agent", "started", "turns", "actions", "last turn", "last execution"), [
        (z["experiment_id"], z["maze"], f"{z['llm_provider']}/{z['model_name']}", z["started_at"], z["turns"],
         z["actions"], z["last_turn_at"] or "-",
         z["last_execution"].rsplit(":", 1)[-1] + (f" ({z['execution_status']})" if aws else "")) for z in found])
    why = "their executions are no longer running" if aws else "no live `oriole run` process holds them"
    if not fix:
        out.print(f"\n{len(found)} open experiment(s): {why}. Close them with `oriole doctor --fix"
                  f"{' --aws' if aws else ''}`.")
        return
    for z in found:
        outcome = f"closed: {z['failure_reason']}" if z["closed"] else "left open: a successor execution carries it on"
        out.print(f"experiment {z['experiment_id']} {outcome}")


app.command()(report.report)
app.command()(render.render)
app.command()(sweep.sweep)


def main() -> None:
    try:
        app()
    except OrioleError as error:
        err.print(f"[bold red]{type(error).__name__}:[/] {error}")
        sys.exit(2)
