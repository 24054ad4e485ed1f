"""``oriole run``: start an experiment (locally or on AWS), follow it, print the outcome."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from oriole import catalog
from oriole.config import check_override, parse_assignment
from oriole.core.baselines import BASELINE_NAMES
from oriole.provider_registry import BASELINE, DEFAULT_PROVIDER, MODEL_PROVIDERS, PROVIDERS
from oriole.statuses import ExperimentStatus
from oriole_workstation import cloud
from oriole_workstation.cli.common import (
    err,
    fail,
    out,
    print_json,
    whole_number,
)
from oriole_workstation.display import dollars, terminal_safe
from oriole_workstation.outcomes import outcome_text
from oriole_workstation.rows import ExperimentSummary

if TYPE_CHECKING:  # imported where an experiment is launched: the lifecycle and Powertools are no other command's
    from oriole_workstation.launcher import RunResult

MAX_MOVES = tuple(map(int, catalog.BY_KEY["maxMoves"].bounds))
EXPLORATORY = "exploratory"  # the tag (a word of the comment) of a run `--exploratory` leaves out of reports


def real_bedrock_client(execution_input: dict):
    """A Bedrock client with the user's own AWS credentials, made before moto replaces them."""
    import boto3

    from oriole.providers.bedrock import runtime_client

    if boto3.Session().get_credentials() is None:
        raise fail(
            "--provider bedrock calls Amazon Bedrock with your AWS credentials, and none were found: "
            "run `aws configure` or set AWS_PROFILE (and AWS_REGION) first"
        )
    timeout = execution_input["config"].get("requestTimeoutSeconds", catalog.BY_KEY["requestTimeoutSeconds"].default)
    return runtime_client(float(timeout))


def real_bedrock_control():
    """A Bedrock control-plane client with the user's own credentials (StartExperiment looks the model up with it:
    its model identity), made before moto replaces them."""
    from oriole.providers.bedrock import CHECK_TIMEOUT_SECONDS, control_client

    return control_client(CHECK_TIMEOUT_SECONDS)


def execution_input(
    maze: str,
    agent: str | None,
    provider: str | None,
    model: str | None,
    prompt: str,
    config: list[str],
    max_actions: int | None,
    comment: str | None,
    exploratory: bool = False,
) -> dict:
    """The execution input the options describe, exactly what the console would take. An exploratory run is
    tagged so (the word ``exploratory`` first in its comment) and stored archived from its start: out of every
    report, comparison and export until ``oriole experiments restore`` brings it in."""
    if agent and (provider or model):
        raise fail("--agent is a baseline agent; use either --agent or --provider/--model")
    if provider and provider not in MODEL_PROVIDERS:
        raise fail(f"--provider must be one of {', '.join(MODEL_PROVIDERS)}; got {provider!r}")
    if agent and agent not in BASELINE_NAMES:
        raise fail(f"--agent must be one of {', '.join(BASELINE_NAMES)}; got {agent!r}")
    if not agent and not model:
        raise fail("say what runs the maze: --agent NAME (a baseline) or --provider P --model M")
    overrides = dict(parse_assignment(item) for item in config)
    if max_actions is not None:
        overrides["maxMoves"] = check_override(catalog.BY_KEY["maxMoves"], max_actions)
    data: dict[str, object] = {
        "mazeId": maze,
        "llmProvider": BASELINE if agent else provider or DEFAULT_PROVIDER,
        "modelName": agent or model,
        "promptVersion": prompt,
        "config": overrides,
    }
    if exploratory:
        comment = " ".join(filter(None, (EXPLORATORY, comment)))
        data["archived"] = True
    if comment:
        data["comment"] = comment
    return data


def check_api_keys(providers: set[str]) -> None:
    """Read the API keys the providers will send (locally, from the environment) before anything starts: a key
    no HTTP header can carry is refused now, in one line that never quotes it."""
    from oriole.providers.transport import environment_api_key

    for provider in sorted(providers):
        environment_api_key(provider)


@contextmanager
def launcher_for(
    aws: bool,
    data: dict,
    *,
    stack: str | None = None,
    state_machine_arn: str | None = None,
    poll_seconds: float | None = None,
):
    """A launcher on the deployed state machine (``aws``: of ``stack``, by default the deployment's orchestrator
    stack), or on the local one for as long as the block runs.

    Locally an experiment of a provider an AWS service serves (Bedrock) gets a client holding the user's own
    credentials, made before moto replaces them.
    """
    if aws:
        import boto3

        from oriole_workstation.launcher import Launcher

        arn = state_machine_arn or cloud.stack_outputs(boto3.client("cloudformation"), stack)["StateMachineArn"]
        yield Launcher(boto3.client("stepfunctions"), arn, poll_seconds=poll_seconds or 5.0)
        return
    from oriole_workstation.database import local_url
    from oriole_workstation.runner import LocalAws

    bedrock = real_bedrock_client(data) if PROVIDERS[data["llmProvider"]].aws_service else None
    control = real_bedrock_control() if bedrock is not None else None
    with LocalAws(local_url(), bedrock_client=bedrock, bedrock_control=control) as local:
        yield local.launcher(poll_seconds or 0.2)


def run(
    maze: Annotated[
        str, typer.Option(metavar="NAME", help="Maze name or id (see `oriole mazes list`).")
    ] = "perfect-11",
    agent: Annotated[
        str | None, typer.Option(metavar="NAME", help=f"Baseline agent: {', '.join(BASELINE_NAMES)}.")
    ] = None,
    provider: Annotated[
        str | None, typer.Option(metavar="NAME", help=f"LLM provider: {', '.join(MODEL_PROVIDERS)}.")
    ] = None,
    model: Annotated[str | None, typer.Option(metavar="NAME", help="Model name for the provider.")] = None,
    prompt: Annotated[str, typer.Option(metavar="VERSION", help="Prompt version (see `oriole prompts list`).")] = "v1",
    config: Annotated[
        list[str], typer.Option("--config", "-c", metavar="KEY=VALUE", help="A catalog override (repeatable).")
    ] = [],  # noqa: B006 - typer reads the default, never mutates it
    max_actions: Annotated[
        int | None,
        typer.Option(
            "--max-moves", help="Shorthand for --config maxMoves=N.", metavar="N", parser=whole_number(*MAX_MOVES)
        ),
    ] = None,
    ollama_url: Annotated[
        str | None, typer.Option(help="Ollama endpoint (shorthand for --config endpoint=URL).")
    ] = None,
    openai_url: Annotated[
        str | None,
        typer.Option(
            help="Base URL of an OpenAI-compatible server, e.g. "
            "http://gpu-box:8000/v1 (shorthand for --config "
            "baseUrl=URL)."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            help="The experiment's seed (shorthand for --config seed=N; default: "
            "drawn, and stored on the experiment either way).",
            metavar="N",
            parser=whole_number(0, 2**31 - 1),
        ),
    ] = None,
    comment: Annotated[str | None, typer.Option(help="Free text stored on the experiment.")] = None,
    exploratory: Annotated[
        bool,
        typer.Option(
            "--exploratory",
            help="A try, not a result: tag it exploratory and leave it out of every report, comparison and export "
            "(oriole ls lists it; oriole experiments restore ID counts it).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the summary.")] = False,
    aws: Annotated[
        bool,
        typer.Option(
            "--aws", help="Start it on the deployed state machine; DATABASE_URL points at the deployed database."
        ),
    ] = False,
) -> None:
    """Run one experiment and print its result.

    It runs through the local state machine, or with --aws through the deployed one.

    Exit status: 0 when the experiment ended on the agent's merits (the goal found, a limit reached, or an
    ending the agent caused such as stalling), 1 on an infrastructure or provider error, 2 when the input was
    rejected.
    """
    from oriole_workstation.database import open_results

    config = [
        *config,
        *(f"{key}={url}" for key, url in (("endpoint", ollama_url), ("baseUrl", openai_url)) if url),
        *([f"seed={seed}"] if seed is not None else []),
    ]
    data = execution_input(maze, agent, provider, model, prompt, config, max_actions, comment, exploratory)
    if not aws:  # on AWS the deployed functions read the keys from their secrets
        check_api_keys({data["llmProvider"]})
    results = open_results(aws)
    with launcher_for(aws, data) as launcher:
        execution_arn = launcher.start(data)
        if aws and not as_json:
            err.print(f"started {execution_arn}", highlight=False, markup=False)
        with ProgressLine(data, disable=as_json) as show:
            result = launcher.follow(execution_arn, results, show)
    if as_json:
        print_json(result.as_json())
    else:
        print_result(result)
        if exploratory and result.summary is not None:
            out.print(exploratory_note(result.summary.experiment_id), soft_wrap=True, markup=False)
    raise typer.Exit(exit_status(result))


def exploratory_note(experiment_id: int) -> str:
    return (
        f"Exploratory: left out of every report, comparison and export; "
        f"`oriole experiments restore {experiment_id}` counts it."
    )


def exit_status(result: RunResult) -> int:
    """0: the experiment ended on the agent's merits (a success, a limit, or a failure the agent caused such as
    stalling: a run); 1: an error (infrastructure or provider); 2: the input was rejected."""
    if result.summary is None:
        return 2
    return 1 if result.summary.errored else 0


class ProgressLine:
    """A live line while the experiment runs: turn, actions against the limit, position."""

    def __init__(self, data: dict, disable: bool):
        limit = data["config"].get("maxMoves") or catalog.BY_KEY["maxMoves"].int_default
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=None),  # the bar takes the width the rest leaves, on any terminal
            TextColumn("{task.completed}/{task.total} actions"),
            TimeElapsedColumn(),
            console=err,
            disable=disable,
            transient=True,
        )
        self.task = self.bar.add_task("starting", total=limit)

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)

    def __call__(self, summary: ExperimentSummary) -> None:
        description = (
            f"experiment {summary.experiment_id} · turn {summary.turns} · "
            f"position ({summary.current_x}, {summary.current_y})"
        )
        self.bar.update(self.task, completed=summary.actions, description=description)


def _sight(s: ExperimentSummary) -> str:
    """``; 21 to see the goal``: the optimum its path is measured against, where it is not the shortest path (the
    goal condition sight)."""
    optimum = s.optimal_path_length
    return "" if optimum == s.shortest_path_length else f"; {optimum} to see the goal"


def failed_attempts_text(s: ExperimentSummary) -> str:
    """``1,240 tokens, $0.0031 in 2 attempts``: what the calls a server answered in turns that then failed (and were
    retried, or ended the run) spent; counted in the experiment's tokens and cost (``unpriced`` without a price)."""
    attempts = f"{s.failed_attempts} attempt{'s' if s.failed_attempts > 1 else ''}"
    return f"{s.failed_tokens:,} tokens, {dollars(s.failed_cost_usd)} in {attempts} (in the experiment's totals)"


def print_result(result: RunResult) -> None:
    """The result block: the same for a local run and a run on AWS. Stored text is shown, never interpreted."""
    s = result.summary
    if s is None:
        raise fail(f"the execution was rejected: {result.as_json()['failure_reason']}")
    outcome = Text(
        outcome_text(s.status, s.failure_reason),
        {ExperimentStatus.SUCCEEDED: "green", ExperimentStatus.TIMED_OUT: "yellow"}.get(
            ExperimentStatus(s.status), "red"
        ),
    )
    rows: list[tuple[str, str | Text]] = [
        ("experiment", str(s.experiment_id)),
        ("agent", f"{s.llm_provider} / {s.model_name}"),
        ("maze", f"{s.maze} (shortest path {s.shortest_path_length} moves{_sight(s)})"),
        ("outcome", outcome),
        ("actions", f"{s.actions} ({s.moves} moves, {s.failed_moves} into walls)"),
        ("turns", str(s.turns)),
        ("path efficiency", "-" if s.path_efficiency is None else f"{s.path_efficiency:.3f}"),
        ("duration", f"{s.duration_seconds:.1f} s"),
    ]
    if s.failed_attempts:
        rows.append(("spent on failed attempts", failed_attempts_text(s)))
    if s.failure_reason:
        rows.append(("reason", s.failure_reason))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:  # Text: never parsed as markup; a line ends where its value does (no padding)
        shown = value if isinstance(value, Text) else Text(terminal_safe(value))
        out.print(Text.assemble((key.ljust(width), "bold"), "  ", shown))
    out.print(
        f'\nQuery it: oriole db psql -c "SELECT step_number, action_type, to_x, to_y, success '
        f'FROM actions WHERE experiment_id = {s.experiment_id} ORDER BY step_number"',
        soft_wrap=True,
        markup=False,
    )
