"""The experiment lifecycle, one function per state-machine task.

Handlers call these with their event and the adapters they need (the store, a parameter reader, an
agent factory); here the event is validated, the core is called and the result is written. Each
function is safe to retry: a retried start, turn or finalize finds its earlier work and returns it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

import psycopg

from oriole import catalog, code_identity, inputs, labels
from oriole.config import resolve
from oriole.core import harness, mazeset, picture, prices, progress
from oriole.core.maze import Maze, goal_visible, optimal_path_length, vision
from oriole.core.mazeset import MazeEntry
from oriole.core.turn import AnsweredCall, PlayedTurn, Turn, TurnState
from oriole.core.turn_loop import Agent, AgentSetup
from oriole.environment import Environment
from oriole.errors import (
    ContinuationRefused,
    ExperimentNotFound,
    ExperimentNotRunning,
    InvalidConfig,
    InvalidExecutionInput,
    InvalidParameter,
    ModelThrottled,
    TurnOutOfOrder,
    UnknownPromptVersion,
)
from oriole.experiment_config import ExperimentConfig
from oriole.inputs import ExecutionStatusChange
from oriole.lifecycle import deployment
from oriole.lifecycle.task_io import (
    CaughtError,
    Continued,
    ContinueRequest,
    ExperimentStarted,
    Finalized,
    FinalizeRequest,
    ProgressDecision,
    ProgressRequest,
    StartRequest,
    TurnRequest,
    TurnResult,
)
from oriole.provider_registry import PROVIDERS
from oriole.providers.identity import UNKNOWN, ModelIdentity
from oriole.statuses import ExecutionStatus, ExperimentStatus
from oriole.store import Store
from oriole.store.experiments import ExperimentRef, NewExperiment
from oriole.store.mazes import StoredMaze
from oriole.store.turn_rows import failed_attempt_write, turn_write
from oriole.text import JsonObject, stored_message, unstorable

AgentFactory = Callable[[AgentSetup], Agent]  # a provider's adapter (its agent function), keyed as its task needs
_MAZE_CACHE: dict[int, StoredMaze] = {}  # experiment id -> its maze; a warm container skips the grid
_MAZE_CACHE_SIZE = 64


ParameterReader = Callable[[Sequence[str]], Mapping[str, str]]
# (provider, model, the experiment's configuration) -> what the model's server reports (oriole.providers.identity)
Identify = Callable[[str, str, ExperimentConfig], ModelIdentity | None]


def start(
    request: StartRequest, store: Store, read_parameters: ParameterReader, identify: Identify | None = None
) -> ExperimentStarted:
    """StartExperiment: validate the input, snapshot the configuration, create the experiment row.

    ``read_parameters`` is given the Parameter Store names the experiment needs (the catalog, the chosen
    prompt, the model's price) and returns the values of those that exist (it may return more). A
    successor execution (input ``{"experimentId": N}``) attaches itself to its experiment instead.
    Nothing is written until every check has passed, so a bad input leaves no row behind; on AWS the
    checks include what the deployment allows (``oriole.lifecycle.deployment``). ``identify`` asks the model's
    server which build it serves (once, here: never per turn), after every check and before the row is written.
    """
    raw, execution_arn = request.input, request.executionArn
    if isinstance(raw, dict) and "experimentId" in raw:
        return _resume(inputs.parse(inputs.Continuation, raw, "continuation input"), execution_arn, store)
    if isinstance(raw, dict) and "replayOf" in raw:
        return _replay(inputs.parse(inputs.ReplayInput, raw, "replay input"), execution_arn, store)
    return _start_new(
        inputs.parse(inputs.ExecutionInput, raw, "execution input"), execution_arn, store, read_parameters, identify
    )


def _start_new(
    request: inputs.ExecutionInput,
    execution_arn: str,
    store: Store,
    read_parameters: ParameterReader,
    identify: Identify | None,
) -> ExperimentStarted:
    """A new experiment: every check first (the maze, the model, the configuration, the prompt, what the deployment
    allows), then its row."""
    # a stored maze (the shipped set, seeded mazes drawn before, imported ones), or a seeded name drawn now
    chosen = store.find_maze(request.mazeId) or mazeset.seeded(str(request.mazeId))
    provider = PROVIDERS[request.llmProvider]
    if provider.models and request.modelName not in provider.models:
        raise InvalidExecutionInput(
            f"modelName {request.modelName!r} is not a {provider.name} agent; expected one of "
            f"{', '.join(provider.models)}"
        )
    if provider.aws_service:
        deployment.check_granted_model(request.modelName)
    labels.check_against_stored([request.agentLabel or f"{provider.name}/{request.modelName}"], store.agent_names)
    config, prompt = _snapshot(request, read_parameters)
    settings = ExperimentConfig.of(config)
    _check_observation(request, settings, chosen.maze)
    model = identify(request.llmProvider, request.modelName, settings) if identify else None
    if request.modelBuild is not None:
        _check_build(request, model)
    if isinstance(chosen, MazeEntry):  # stored only once every check has passed
        chosen = store.add_maze(chosen, "generated")
    maze = chosen.maze
    row = store.create_experiment(
        NewExperiment(
            maze_id=chosen.id,
            llm_provider=request.llmProvider,
            model_name=request.modelName,
            prompt_version=request.promptVersion,
            prompt_text=prompt,
            prompt_hash=catalog.prompt_hash(prompt),
            agent_id=request.agentId,
            agent_label=request.agentLabel,
            sweep_id=request.sweepId,
            archived=request.archived,
            comment=request.comment,
            config=config,
            seed=settings.seed,
            start=maze.start,
            goal_first_seen_step=0 if goal_visible(vision(maze, maze.start, settings.vision_range)) else None,
            optimal_path_length=optimal_path_length(settings.goal_condition, maze, settings.vision_range),
            execution_arn=execution_arn,
            code=code_identity.current(),
            harness=harness.description(),
            model=model,
        )
    )
    return _state(row)


def _check_build(request: inputs.ExecutionInput, model: ModelIdentity | None) -> None:
    """A start that asks for a model build (``modelBuild``: a rerun of a recorded experiment) runs only on that
    build: refused, naming both, when the server now reports another (a tag pulled again, another quantisation
    behind the name) or does not tell its build."""
    asked = f"the execution input asks for build {request.modelBuild} of {request.modelName}"
    override = "; start it without modelBuild (`oriole rerun --any-build`) to run on what the server serves now"
    if model is None or model.model_build == UNKNOWN:
        why = "; ".join(f"{k}: {v}" for k, v in sorted((model.unknown if model else {}).items())) or "not asked"
        raise InvalidExecutionInput(f"{asked}, and the server did not tell its build ({why}){override}")
    if model.model_build != request.modelBuild:
        raise InvalidExecutionInput(f"{asked}, and the server now serves build {model.model_build}{override}")


def _snapshot(request: inputs.ExecutionInput, read_parameters: ParameterReader) -> tuple[JsonObject, str]:
    """The configuration snapshot as it is stored (JSON by catalog key; ``ExperimentConfig`` reads it) and the prompt
    text, from only the parameters this experiment needs."""
    prompt_name, pricing = catalog.prompt_name(request.promptVersion), catalog.pricing_name(request.modelName)
    provider = PROVIDERS[request.llmProvider]
    priced = provider.calls_model and request.prices is None  # given prices come first
    stored = read_parameters([*catalog.START_NAMES, prompt_name, *([pricing] if priced else [])])
    config = resolve(stored, request.config, request.llmProvider)
    if provider.servers is not None:
        deployment.check_model_server(provider, str(config[provider.servers.key]))
    prompt = stored.get(prompt_name)
    if not prompt:
        raise UnknownPromptVersion(
            f"no prompt at {prompt_name}: store it with `oriole prompts put "
            f"{request.promptVersion} --file PROMPT.md` (`oriole prompts list` lists the "
            "stored versions)"
        )
    if problem := unstorable(prompt):
        raise InvalidParameter(f"the prompt at {prompt_name} {problem}; store it again with `oriole prompts put`")
    if config["seed"] == -1:
        config["seed"] = secrets.randbelow(2**31)
    given = (
        None
        if request.prices is None
        else prices.Price(
            request.prices.inputPerMTok, request.prices.outputPerMTok, request.prices.source or "execution input"
        )
    )
    charged = prices.price(request.llmProvider, request.modelName, given, stored.get(pricing))
    config["pricing"] = charged and charged.as_snapshot()
    return config, prompt


def _check_observation(request: inputs.ExecutionInput, config: ExperimentConfig, maze: Maze) -> None:
    """Pictures go only to a model marked as accepting images, and only in a size the picture bound allows (a
    baseline ignores pictures: nothing to check). An image condition gets no text map: mapAid applies only with
    text (the catalog's ``applies_when``, checked by ``resolve``)."""
    if not PROVIDERS[request.llmProvider].calls_model or config.observation == picture.TEXT:
        return
    deployment.check_image_model(request.modelName, config.observation)
    if problem := picture.view_problem(config.image_view, config.vision_range, (maze.width, maze.height)):
        raise InvalidConfig(f"config.{problem}")


def _resume(request: inputs.Continuation, execution_arn: str, store: Store) -> ExperimentStarted:
    """Attach a successor execution to its experiment: only the execution its current execution handed over
    to may carry it on. It is named as the next part (``progress.successor_name``) and its input holds the
    token that execution's ContinueAsNew issued; an execution started by hand under that name holds none, so
    neither an input naming someone else's experiment nor a console execution can take it over. The token is
    checked and consumed in the statement that attaches, and never quoted."""
    experiment_id, name = request.experimentId, execution_arn.rsplit(":", 1)[-1]
    part = progress.successor_part(experiment_id, execution_arn)
    if part is None:
        raise ContinuationRefused(
            f"execution {name} cannot continue experiment {experiment_id}: only its "
            f"successor executions, named {progress.successor_name(experiment_id, 2)}, "
            f"{progress.successor_name(experiment_id, 3)}..., may"
        )
    token = request.continuationToken
    row = store.attach_execution(
        experiment_id, execution_arn, part, None if token is None else progress.continuation_hash(token)
    )
    if row is None:
        if store.progress(experiment_id) is None:
            raise ExperimentNotFound(f"experiment {experiment_id} does not exist; cannot continue it")
        why = (
            "its input has no continuationToken"
            if token is None
            else "it is not the next part, or its continuationToken was not issued by the experiment's current "
            "execution"
        )
        raise ContinuationRefused(
            f"execution {name} cannot continue experiment {experiment_id}: {why}. Only the "
            "experiment's own ContinueAsNew task starts its next part; start a new experiment "
            "instead"
        )
    if row.status != ExperimentStatus.RUNNING:
        raise ExperimentNotRunning(f"experiment {request.experimentId} is already {row.status}")
    return _state(row)


def _replay(request: inputs.ReplayInput, execution_arn: str, store: Store) -> ExperimentStarted:
    """Start a replay: a scratch copy of the original experiment as it started (``experiments.replay_of``; its
    configuration, prompt, seed and maze), played by the recorded agent (``oriole.providers.replay``). The original
    is only read. Refused, with nothing written, when it cannot be replayed (``Store.replay_problem``)."""
    if problem := store.replay_problem(request.replayOf):
        raise InvalidExecutionInput(f"experiment {request.replayOf} cannot be replayed: {problem}")
    return _state(store.create_replay(request.replayOf, execution_arn, code_identity.current(), harness.description()))


StartExecution = Callable[[str, str, JsonObject], str]  # state machine ARN, execution name, input -> execution ARN


def continue_as_new(request: ContinueRequest, store: Store, start_execution: StartExecution) -> Continued:
    """ContinueAsNew: issue a continuation token for the next part, then start the successor execution with it.

    The row keeps the token's hash; the token itself travels only in the successor's input. A retried task
    issues another token for the same part, and the start is idempotent by the successor's fixed name: when an
    earlier attempt started it, ``start_execution`` returns that execution, which still holds an accepted
    token (or has attached already).
    """
    experiment_id, part = request.experimentId, request.part + 1
    token, token_hash = progress.continuation_token()
    issue = store.issue_continuation(experiment_id, request.part, token_hash)
    if issue is None:
        raise ExperimentNotFound(f"experiment {experiment_id} does not exist; cannot continue it")
    if not issue.issued and issue.parts <= request.part:  # closed while this part ran: nothing to carry on
        raise ExperimentNotRunning(
            f"experiment {experiment_id} is {issue.status} with {issue.parts} execution(s); part {part} not started"
        )
    arn = start_execution(
        request.stateMachineArn,
        progress.successor_name(experiment_id, part),
        {"experimentId": experiment_id, "continuationToken": token},
    )
    return Continued(successor_execution_arn=arn, part=part)


def _state(row: ExperimentRef) -> ExperimentStarted:
    """The small state the execution carries between tasks: ids and counters, never actions or messages."""
    return ExperimentStarted(
        experiment_id=row.id,
        llm_provider=row.llm_provider,
        turn_number=row.turn_count + 1,
        turn_in_execution=1,
        part=row.parts,
    )


def _cache_maze(experiment_id: int, maze: StoredMaze) -> None:
    if len(_MAZE_CACHE) >= _MAZE_CACHE_SIZE:
        _MAZE_CACHE.clear()
    _MAZE_CACHE[experiment_id] = maze


def play_turn(
    request: TurnRequest, store: Store, agent_factory: AgentFactory, seconds_left: Callable[[], float] | None = None
) -> TurnResult:
    """One agent task: load the experiment, set the turn up, play it, write it in one statement.

    A turn that is already committed (a retry after a lost response) is returned from the database
    without calling the agent again. ``seconds_left`` is the time the task has left (its Lambda's): the
    turn ends early (``deadline``) when another model request might not finish in it.
    """
    started_at = datetime.now(UTC)
    state, maze = _load(store, request.experimentId, request.turnNumber)
    if state.committed is not None:
        return _committed_result(state, request.turnNumber)
    turn = Turn(state, maze, _deadline(state.experiment.config, seconds_left))
    try:
        played = turn.play(agent_factory(turn.agent_setup))
    except Exception as error:
        _record_failed_attempt(store, state, request.turnNumber, turn.answered, error)
        raise
    return _commit(store, state, request.turnNumber, played, started_at, turn.answered)


def _record_failed_attempt(
    store: Store, state: TurnState, turn_number: int, answered: Sequence[AnsweredCall], error: Exception
) -> None:
    """Keep what a failed attempt spent before its error reaches the state machine (which retries the turn or
    closes the experiment): the calls the server answered, whose tokens and cost it billed, and the throttles of
    the call that failed. One statement, only on this path: the turn's own path keeps its round trips. When the
    database cannot take it either (the failure may be the database's own), the error that failed the attempt is
    still the one raised, with a note of what was not recorded."""
    throttles = error.throttles if isinstance(error, ModelThrottled) else 0
    write = failed_attempt_write(state, turn_number, answered, error, throttles)
    try:
        store.record_failed_attempt(state.experiment.id, write)
    except psycopg.Error as unrecorded:
        error.add_note(
            f"the {len(answered)} model call(s) the server answered in this attempt were not recorded: {unrecorded}"
        )


def _load(store: Store, experiment_id: int, turn_number: int) -> tuple[TurnState, Maze]:
    """The turn's state and maze, in one round trip (the maze only when this container has not cached it); a turn
    that cannot be played now is a named error."""
    maze = _MAZE_CACHE.get(experiment_id)
    loaded = store.load_turn(experiment_id, turn_number, with_maze=maze is None)
    if loaded is None:
        raise ExperimentNotFound(f"experiment {experiment_id} does not exist")
    state = loaded.state
    if state.committed is None and state.experiment.status != ExperimentStatus.RUNNING:
        raise ExperimentNotRunning(
            f"experiment {experiment_id} is {state.experiment.status}; turn {turn_number} not played"
        )
    if state.committed is None and state.experiment.turn_count != turn_number - 1:
        raise TurnOutOfOrder(
            f"experiment {experiment_id} has {state.experiment.turn_count} turns; turn {turn_number} cannot be next"
        )
    if maze is None:
        assert loaded.maze_row is not None, "load_turn reads the maze when asked to"
        maze = loaded.maze_row.stored()
        _cache_maze(experiment_id, maze)
    return state, maze.maze


def _deadline(config: ExperimentConfig, seconds_left: Callable[[], float] | None) -> Callable[[], bool] | None:
    """Whether another model request (its timeout, and the margin to write the turn) no longer fits."""
    if seconds_left is None:
        return None
    needed = config.request_timeout_seconds + catalog.DEADLINE_MARGIN_SECONDS
    return lambda: seconds_left() < needed


def _commit(
    store: Store,
    state: TurnState,
    turn_number: int,
    played: PlayedTurn,
    started_at: datetime,
    answered: Sequence[AnsweredCall],
) -> TurnResult:
    """Write the played turn in one statement; when another attempt committed it first, return that one's result
    (this attempt's calls, which the server answered all the same, are recorded as a failed attempt's)."""
    experiment_id = state.experiment.id
    if not store.commit_turn(experiment_id, turn_number, turn_write(state, played, started_at)):
        stored = store.load_turn(experiment_id, turn_number, with_maze=False)
        if stored is None or stored.state.committed is None:
            error = TurnOutOfOrder(
                f"experiment {experiment_id} changed while turn {turn_number} was played "
                f"and the turn was not written; retry the task"
            )
            _record_failed_attempt(store, state if stored is None else stored.state, turn_number, answered, error)
            raise error
        if answered:  # its costs follow the totals as the other attempt left them
            superseded = TurnOutOfOrder(f"turn {turn_number} was committed by another attempt first")
            _record_failed_attempt(store, stored.state, turn_number, answered, superseded)
        return _committed_result(stored.state, turn_number)
    outcome = played.outcome
    return TurnResult(
        turn_number=turn_number,
        actions=len(outcome.actions),
        end_reason=outcome.end_reason,
        goal_found=played.world.goal_found,
        position=played.world.position,
        input_tokens=outcome.usage.input_tokens,
        output_tokens=outcome.usage.output_tokens,
    )


def _committed_result(state: TurnState, turn_number: int) -> TurnResult:
    """The result of a turn already in the database (a retried task returns it instead of playing again)."""
    committed = state.committed
    assert committed is not None, "only a committed turn has a stored result"
    return TurnResult(
        turn_number=turn_number,
        actions=committed.action_count,
        end_reason=committed.end_reason,
        goal_found=state.experiment.goal_found,
        position=state.experiment.position,
        input_tokens=committed.input_tokens,
        output_tokens=committed.output_tokens,
    )


def check_progress(request: ProgressRequest, store: Store) -> ProgressDecision:
    """CheckProgress: read the experiment's counters and decide what the state machine does next."""
    row = store.progress(request.experimentId)
    if row is None:
        raise ExperimentNotFound(f"experiment {request.experimentId} does not exist")
    if row.status != ExperimentStatus.RUNNING:
        raise ExperimentNotRunning(f"experiment {request.experimentId} is already {row.status}")
    decision = progress.decide(
        progress.Progress(
            row.goal_found,
            row.action_count,
            row.elapsed_seconds,
            request.turnInExecution,
            row.stalled_turns,
            _execution_seconds_left(request.executionStartTime),
            row.gave_up_reason,
            input_tokens=row.input_tokens,
            cost_usd=row.cost_usd,
            tokens=row.agent_tokens,
        ),
        ExperimentConfig.of(row.config),
    )
    return ProgressDecision(
        decision=decision.decision, reason=decision.reason, actions=row.action_count, goal_found=row.goal_found
    )


def _execution_seconds_left(started: str | None) -> float | None:
    """Seconds before the execution's hard timeout (the deployment's, ``oriole.lifecycle.deployment``); None when
    either the start or the timeout is unknown."""
    timeout = Environment.read().execution_timeout_seconds
    if started is None or timeout is None:
        return None
    try:
        start = datetime.fromisoformat(started)
    except ValueError:
        raise InvalidExecutionInput(f"executionStartTime {started!r} is not an ISO 8601 time") from None
    return timeout - (datetime.now(UTC) - start.replace(tzinfo=start.tzinfo or UTC)).total_seconds()


def finalize(request: FinalizeRequest, store: Store, status: ExperimentStatus) -> Finalized:
    """FinalizeSuccess / FinalizeTimeout / FinalizeFailure: close the experiment once.

    For a failure the reason is the one the state machine passes (a stalled agent), else it is built from
    the caught error (its name and message). A failed StartExperiment passes the execution input: a
    successor's names its experiment, which is closed only while this execution is its latest (a refused
    continuation closes nothing); a rejected new input has no experiment to close.
    """
    experiment_id = request.experiment_id
    reason: str | None
    if status == ExperimentStatus.FAILED:
        reason = stored_message(request.reason) if request.reason else failure_reason(request.error)
    else:
        reason = stored_message(request.reason) if request.reason and status != ExperimentStatus.SUCCEEDED else None
    if experiment_id is None:
        return Finalized(experiment_id=None, status=status, closed=False, failure_reason=reason)
    named_by_input = request.experimentId is None
    closed = store.finalize(
        experiment_id, status, reason, last_execution=(request.executionArn or "") if named_by_input else None
    )
    return Finalized(experiment_id=experiment_id, status=status, closed=closed, failure_reason=reason)


def failure_reason(error: CaughtError) -> str:
    """``Error: message`` from a Step Functions Catch result, unwrapping a Lambda error payload (never its
    stack trace); at most ``oriole.text.MAX_MESSAGE_CHARS`` characters, however long the cause."""
    name = error.Error or "UnknownError"
    cause = error.Cause or ""
    try:
        payload = json.loads(cause)
    except (TypeError, ValueError, RecursionError):
        payload = None
    message = payload.get("errorMessage", cause) if isinstance(payload, dict) else cause
    return stored_message(f"{name}: {message}" if message else name)


_CLOSED_BY_EXECUTION: dict[str, tuple[ExperimentStatus, str]] = {
    "FAILED": (ExperimentStatus.FAILED, "failed"),
    "TIMED_OUT": (ExperimentStatus.TIMED_OUT, "reached its execution timeout"),
    "ABORTED": (ExperimentStatus.ABORTED, "was stopped"),
}


def close_after_execution(
    detail: ExecutionStatusChange, store: Store, execution_status: Callable[[str], str | None]
) -> JsonObject:
    """The status-change finalizer: close the experiment of an execution that ended while it was open.

    ``detail`` is the detail of Step Functions' "Execution Status Change" event (EventBridge on AWS, the
    local launcher locally, ``oriole doctor``). The state machine closes its experiment on every
    path it can catch; this covers the rest: the execution timed out or was aborted, the failure path
    itself failed, or a successor execution never started (``execution_status`` tells whether the
    successor named in a handed-over execution's output is running; None when it does not exist).

    Only the execution that carries the experiment counts: its latest, or its next successor (started by
    its ContinueAsNew: its input holds a token that task issued) that ended before attaching itself. The end
    of an earlier part, of an execution merely named like the next part, of a closed experiment, or a repeated
    event change nothing, and the close itself only applies while that execution is still the latest.
    """
    arn, status, name = detail.executionArn, detail.status, detail.name
    execution_input = _json_object(detail.input)
    hint, token = execution_input.get("experimentId"), execution_input.get("continuationToken")
    row = store.experiment_for_execution(
        arn, hint if type(hint) is int else None, progress.continuation_hash(token) if isinstance(token, str) else None
    )
    result = {
        "executionArn": arn,
        "status": status,
        "experimentId": row.id if row else None,
        "closed": False,
        "failureReason": None,
    }
    if row is None or row.completed:
        return result
    arns = row.execution_arns
    unattached = arn not in arns and name == progress.successor_name(row.id, len(arns) + 1) and row.continuation_issued
    if arn != arns[-1] and not unattached:
        return result
    if status == ExecutionStatus.SUCCEEDED:
        successor = (_json_object(detail.output).get("continuation") or {}).get("successorExecutionArn")
        successor_status = execution_status(successor) if successor else None
        if successor_status == ExecutionStatus.RUNNING:
            return result  # it attaches itself when it starts; its own end is reported in turn
        new_status, reason = ExperimentStatus.FAILED, _continuation_reason(name, successor, successor_status)
    elif status in _CLOSED_BY_EXECUTION:
        new_status, what = _CLOSED_BY_EXECUTION[status]
        reason = f"execution {status}: {name} {what}"
        if detail.error or detail.cause:
            caught = CaughtError(Error=detail.error, Cause=detail.cause)
            reason += f" ({failure_reason(caught) if detail.error else detail.cause})"
    else:
        return result
    reason = stored_message(reason)
    closed = store.finalize(row.id, new_status, reason, last_execution=arns[-1])
    return {
        **result,
        "closed": closed,
        "failureReason": reason if closed else None,
        "experimentStatus": new_status if closed else None,
    }


def _continuation_reason(name: str, successor: str | None, successor_status: str | None) -> str:
    if successor is None:
        return f"continuation did not start: execution {name} ended with the experiment open and no successor"
    state = f"already ended ({successor_status})" if successor_status else "does not exist"
    return f"continuation did not start: execution {name} handed over to {successor.rsplit(':', 1)[-1]}, which {state}"


def _json_object(text: object) -> JsonObject:
    """An event's JSON text (input, output) as a dict; anything else (absent, truncated, a list) as {}."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
