"""The sweep state machine's tasks, one function each (as ``experiments`` is for the experiment flow): plan a
run, start one repetition's experiment, look at it, count the outcomes. The handlers pass in the Step
Functions calls, so nothing here talks to AWS; the store holds the sweep's experiments.

Every task gets the sweep as it was validated by ``plan_run`` and recomputes what it needs from it (a
plan index -> its experiment): the state machine carries indices, never the expanded matrix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from itertools import chain

from oriole import inputs
from oriole.core import sweep_plan
from oriole.core.sweep_plan import Cell, Planned, SweepExperiment, SweepRun, validate
from oriole.errors import InvalidExecutionInput
from oriole.provider_registry import NAMES
from oriole.statuses import TERMINAL_EXECUTION_STATUSES, Ending, RepetitionOutcome
from oriole.store import Store
from oriole.text import JsonObject

OUTCOMES = {
    "succeeded": "succeeded",
    "timed_out": "timedOut",
    "failed": "failed",
    "aborted": "aborted",
    "running": "running",
    "rejected": "rejected",
    "skipped": "skipped",
}  # outcome -> the summary's key
ENDING_KEYS = {
    Ending.SUCCESS: "successes",
    Ending.AGENT: "agentFailures",
    Ending.CENSORED: "censored",
    Ending.ERROR: "errors",
}  # how the repetitions that ended ended (oriole.core.endings) -> the summary's key
_MATRICES: dict[str, list[Cell]] = {}  # a warm container's sweeps: their cells, by the sweep's JSON
_MATRIX_CACHE_SIZE = 8


def stored_maze_names(store: Store) -> sweep_plan.StoredMaze:
    """The look-up ``sweep_plan.cells`` takes: a stored (imported, seeded) maze's name and grid hash by its name or
    id."""

    def found(key: str | int) -> tuple[str, str] | None:
        maze = store.find_maze(key)
        return None if maze is None else (maze.name, maze.content_hash)

    return found


def _matrix(run: SweepRun, store: Store) -> list[Cell]:
    """The sweep's cells, computed once per warm container (the same file always gives the same cells; maze
    samples draw their mazes, which a thousand items must not each do again)."""
    key = run.model_dump_json()
    if key not in _MATRICES:
        if len(_MATRICES) >= _MATRIX_CACHE_SIZE:
            _MATRICES.clear()
        _MATRICES[key] = sweep_plan.cells(run, stored_maze_names(store))
    return _MATRICES[key]


def plan_run(
    event: object,
    store: Store,
    known_prompts: Callable[[], Mapping[str, str] | Iterable[str]],
    known_prices: Callable[[], Mapping[str, str]],
) -> JsonObject:
    """PlanSweep: validate the sweep (the whole matrix, the prompt versions where it runs, a price for every
    model under a spend limit: ``known_prices`` gives Parameter Store's pricing entries by name) and return, per
    provider, the plan indices left to run (resume) and the provider's concurrency cap. The sweep is checked
    for size as given and as carried (validated, its defaults filled in)."""
    sweep_plan.check_input_size(event)
    run = validate(SweepRun, event, "sweep input")
    sweep = run.model_dump(mode="json")
    sweep_plan.check_input_size(sweep)
    sweep_plan.check_prompts(run, known_prompts())
    planned = sweep_plan.plan(run, stored_maze_names(store))
    if run.spend_limit_usd is not None:
        sweep_plan.check_prices(run, _matrix(run, store), known_prices(), run.allow_unpriced)
    todo = sweep_plan.pending(run.id, planned, store.sweep_experiments(run.id), run.retry_failed)
    store.record_sweep_plan(run.id, len(planned), sweep)
    indices = {provider: [i for i in todo if planned[i].cell.provider == provider] for provider in NAMES}
    return {
        "sweep": sweep,
        "planned": len(planned),
        "alreadyDone": len(planned) - len(todo),
        "indices": indices,
        "caps": sweep_plan.caps(run, [p for p in NAMES if indices[p]]),
        "waitSeconds": run.wait_seconds,
    }


def _item(run: SweepRun, store: Store, index: int) -> Planned:
    matrix = _matrix(run, store)
    if index >= len(matrix) * run.repetitions:
        raise InvalidExecutionInput(
            f"plan index {index} is out of the sweep's {len(matrix) * run.repetitions} experiments"
        )
    return sweep_plan.planned_at(matrix, index)


def start_repetition(
    event: object, store: Store, start: Callable[[str, str, JsonObject], str]
) -> inputs.RepetitionStarted:
    """StartRepetition: start the experiment of one plan index, unless its repetition already ended (resume)
    or the sweep has spent its limit. ``start(state machine, name, input)`` starts an execution under a
    deterministic name (sweep, cell, repetition, attempt) and returns its ARN, the existing one's when a
    retried or resumed item starts it again."""
    request = inputs.parse(inputs.RepetitionRequest, event, "sweep item")
    run = validate(SweepRun, request.sweep, "sweep input")
    item = _item(run, store, request.index)
    state = sweep_plan.repetition(store.repetition_attempts(run.id, item.agent_id(run.id)), run.retry_failed)
    if state.ended is not None:
        return inputs.RepetitionStarted(outcome=state.ended, execution_arn=None)
    if run.spend_limit_usd is not None and store.sweep_spend(run.id) >= run.spend_limit_usd:
        return inputs.RepetitionStarted(outcome=RepetitionOutcome.SKIPPED, execution_arn=None)
    arn = start(
        request.experimentStateMachineArn, item.execution_name(run.id, state.attempt), item.execution_input(run)
    )
    return inputs.RepetitionStarted(outcome=RepetitionOutcome.STARTED, execution_arn=arn)


def check_repetition(event: object, store: Store, execution_status: Callable[[str], str | None]) -> JsonObject:
    """CheckRepetition: whether the experiment an item started is closed, and how it ended (an execution that
    ended before any experiment existed was rejected); and, for an item that waits on, how long to wait before
    the next look (``sweep_plan.next_check_wait``) and how long it will then have followed the experiment."""
    check = inputs.parse(inputs.RepetitionCheck, event, "sweep check")
    wait = sweep_plan.next_check_wait(check.followedSeconds, check.waitSeconds)
    return {
        **_look(check.executionArn, store, execution_status),
        "waitSeconds": wait,
        "followedSeconds": check.followedSeconds,
    }


def _look(arn: str, store: Store, execution_status: Callable[[str], str | None]) -> JsonObject:
    row = store.execution_outcome(arn)
    if row is None:
        status = execution_status(arn)
        if status is not None and status not in TERMINAL_EXECUTION_STATUSES:
            return {"closed": False, "outcome": RepetitionOutcome.STARTING}
        row = store.execution_outcome(arn)  # it may have made its experiment and ended since the first look
        if row is None:
            return {"closed": True, "outcome": RepetitionOutcome.REJECTED}
    return {"closed": row.completed, "outcome": row.status}


def summarize(event: object, store: Store, failed_executions: Callable[[str, str], set[str]]) -> JsonObject:
    """SummarizeSweep: how this run's repetitions stand, from the database (the maps keep no results):
    each by its latest experiment's status and, once it ended, its ending (success, agent failure, censored,
    error), a repetition without one rejected (its execution, found among ``failed_executions(state machine,
    name prefix)``, failed before making it) or skipped (never started: the spend limit, or the sweep was
    stopped)."""
    request = inputs.parse(inputs.SweepSummaryRequest, event, "sweep summary")
    run = validate(SweepRun, request.sweep, "sweep input")
    history = sweep_plan.by_repetition(store.sweep_experiments(run.id))
    rejected = failed_executions(request.experimentStateMachineArn, f"{run.id}-")
    counts: Counter[str] = Counter()
    endings: Counter[Ending] = Counter()
    for index in chain.from_iterable(request.indices.values()):
        item = _item(run, store, index)
        attempts = history.get(item.agent_id(run.id), [])
        outcome = _outcome(run.id, item, attempts, rejected)
        counts[outcome] += 1
        if outcome != RepetitionOutcome.REJECTED and attempts and attempts[-1].ending is not None:
            endings[attempts[-1].ending] += 1
    return {
        "sweepId": run.id,
        "planned": request.planned,
        "alreadyDone": request.alreadyDone,
        **{key: counts[outcome] for outcome, key in OUTCOMES.items()},
        **{key: endings[ending] for ending, key in ENDING_KEYS.items()},
        "spentUsd": store.sweep_spend(run.id),
    }


def _outcome(sweep_id: str, item: Planned, attempts: list[SweepExperiment], rejected: set[str]) -> str:
    """A repetition's outcome: its attempt of this run was rejected, else its latest experiment's status."""
    if item.execution_name(sweep_id, sweep_plan.repetition(attempts, retry_failed=True).attempt) in rejected:
        return RepetitionOutcome.REJECTED
    return attempts[-1].status if attempts else RepetitionOutcome.SKIPPED
