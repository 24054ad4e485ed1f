"""The sweep state machine's tasks, one function each (as ``experiments`` is for the experiment flow): plan a
run, start one repetition's experiment, look at it, count the outcomes. The handlers pass in the Step
Functions calls, so nothing here talks to AWS; the store holds the sweep's experiments.

Every task gets the sweep as it was validated by ``plan_run`` and recomputes what it needs from it (a
plan index -> its experiment): the state machine carries indices, never the expanded matrix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import chain

from oriole import labels
from oriole.catalog import BY_KEY
from oriole.config import parse_stored
from oriole.core import sweep_plan
from oriole.core.sweep_plan import Cell, Planned, SweepExperiment, SweepRun
from oriole.errors import InvalidExecutionInput
from oriole.lifecycle.task_io import (
    RepetitionCheck,
    RepetitionChecked,
    RepetitionRequest,
    RepetitionStarted,
    SweepPlanned,
    SweepRequest,
    SweepSummary,
    SweepSummaryRequest,
)
from oriole.provider_registry import NAMES, PROVIDERS
from oriole.statuses import TERMINAL_EXECUTION_STATUSES, Ending, ExperimentStatus, RepetitionOutcome
from oriole.store import Store
from oriole.text import JsonObject

# how a repetition stands, each the name of its count in the summary (SweepSummary)
OUTCOMES = ("succeeded", "timed_out", "failed", "aborted", "running", "rejected", "skipped", "paused")
ENDING_FIELDS = {
    Ending.SUCCESS: "successes",
    Ending.AGENT: "agent_failures",
    Ending.CENSORED: "censored",
    Ending.ERROR: "errors",
}  # how the repetitions that ended ended (oriole.core.endings) -> the summary's field
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


@dataclass(frozen=True)
class Deployment:
    """What PlanSweep reads of where it runs: the prompt versions, the prices (Parameter Store's pricing entries
    by name), the experiments' cost cap (``maxCostUsd``, as a parameter's text), whether a sweep of models needs a
    spend limit (on AWS), and how many Lambda invocations the account may run at once (None: no limit known)."""

    prompts: Callable[[], Mapping[str, str] | Iterable[str]]
    prices: Callable[[], Mapping[str, str]]
    cost_cap: Callable[[], str | None]
    spend_limit_required: bool = False
    concurrency: Callable[[], int | None] = lambda: None


def plan_run(request: SweepRequest, store: Store, where: Deployment) -> SweepPlanned:
    """PlanSweep: check the sweep (the whole matrix, the prompt versions where it runs, a price for every model
    under a spend limit, what it may spend) and return, per provider, the plan indices left to run (resume) and the
    provider's concurrency cap, within the account's Lambda concurrency. The sweep is checked for size as given
    (``SweepRequest``) and as carried (validated, its defaults filled in, the experiments' cost cap fixed)."""
    run: SweepRun = request
    if run.cost_cap_usd is None:
        run = run.model_copy(update={"cost_cap_usd": _cost_cap(where.cost_cap())})
    sweep = run.model_dump(mode="json")
    sweep_plan.check_input_size(sweep)
    sweep_plan.check_prompts(run, where.prompts())
    planned = sweep_plan.plan(run, stored_maze_names(store))
    sweep_plan.check_spending(run, _matrix(run, store), where.spend_limit_required)
    labels.check_against_stored([cell.agent for cell in _matrix(run, store)], store.agent_names)
    if run.spend_limit_usd is not None:
        sweep_plan.check_prices(run, _matrix(run, store), where.prices(), run.allow_unpriced)
    todo = sweep_plan.pending(run.id, planned, store.sweep_experiments(run.id), run.retry_failed)
    store.record_sweep_plan(run.id, len(planned), sweep)
    lanes = sweep_plan.capped_lanes(run, _matrix(run, store))
    map_of = {cell: sweep_plan.lane_of(cell, lanes) for cell in _matrix(run, store)}
    indices: dict[str, list[int]] = {group: [] for group in (*NAMES, *sweep_plan.LANES)}  # every map reads its own
    for i in todo:
        indices[map_of[planned[i].cell]].append(i)
    used = [group for group, found in indices.items() if found]
    return SweepPlanned(
        sweep=sweep,
        planned=len(planned),
        already_done=len(planned) - len(todo),
        indices=indices,
        caps=sweep_plan.caps(run, used, sweep_plan.experiments_at_once(where.concurrency(), len(used)), lanes),
        wait_seconds=run.wait_seconds,
    )


def _cost_cap(text: str | None) -> float:
    """The deployment's maxCostUsd (the catalog's default where none is stored)."""
    param = BY_KEY["maxCostUsd"]
    value = param.default if text is None else parse_stored(param, text)
    assert isinstance(value, float)  # the catalog's type for it
    return value


def _item(run: SweepRun, store: Store, index: int) -> Planned:
    matrix = _matrix(run, store)
    if index >= len(matrix) * run.repetitions:
        raise InvalidExecutionInput(
            f"plan index {index} is out of the sweep's {len(matrix) * run.repetitions} experiments"
        )
    return sweep_plan.planned_at(matrix, index)


def start_repetition(
    request: RepetitionRequest, store: Store, start: Callable[[str, str, JsonObject], str]
) -> RepetitionStarted:
    """StartRepetition: start the experiment of one plan index, unless its repetition already ended (resume)
    or the sweep has spent its limit. ``start(state machine, name, input)`` starts an execution under a
    deterministic name (sweep, cell, repetition, attempt) and returns its ARN, the existing one's when a
    retried or resumed item starts it again."""
    run = request.sweep
    item = _item(run, store, request.index)
    state = sweep_plan.repetition(store.repetition_attempts(run.id, item.agent_id(run.id)), run.retry_failed)
    if state.ended is not None:
        return RepetitionStarted(outcome=state.ended, execution_arn=None)
    execution_input = item.execution_input(run)
    if run.spend_limit_usd is not None:
        cap = sweep_plan.cost_cap(run, item.cell)
        if store.sweep_committed(run.id) + cap > run.spend_limit_usd:
            return RepetitionStarted(outcome=RepetitionOutcome.SKIPPED, execution_arn=None)
        if cap:  # the experiment's own cap is the one the limit counted it at
            execution_input["config"]["maxCostUsd"] = cap
    if paused(run, store, item.cell) is not None:
        return RepetitionStarted(outcome=RepetitionOutcome.PAUSED, execution_arn=None)
    arn = start(request.experimentStateMachineArn, item.execution_name(run.id, state.attempt), execution_input)
    return RepetitionStarted(outcome=RepetitionOutcome.STARTED, execution_arn=arn)


def paused(run: SweepRun, store: Store, cell: Cell) -> str | None:
    """Why the cell's agent starts nothing more in this run, when its model server has failed its latest
    ``pause_after_errors`` experiments of the run alike (``sweep_plan.pause_reason``); None when it goes on. An
    agent that calls no model has no server to lose."""
    if not run.pause_after_errors or not PROVIDERS[cell.provider].calls_model:
        return None
    latest = store.agent_latest(run.id, cell.provider, cell.model, cell.label or None, run.pause_after_errors)
    return sweep_plan.pause_reason(latest, run.pause_after_errors)


def check_repetition(
    check: RepetitionCheck, store: Store, execution_status: Callable[[str], str | None]
) -> RepetitionChecked:
    """CheckRepetition: whether the experiment an item started is closed, and how it ended (an execution that
    ended before any experiment existed was rejected); and, for an item that waits on, how long to wait before
    the next look (``sweep_plan.next_check_wait``) and how long it will then have followed the experiment."""
    closed, outcome = _look(check.executionArn, store, execution_status)
    return RepetitionChecked(
        closed=closed,
        outcome=outcome,
        wait_seconds=sweep_plan.next_check_wait(check.followedSeconds, check.waitSeconds),
        followed_seconds=check.followedSeconds,
    )


def _look(
    arn: str, store: Store, execution_status: Callable[[str], str | None]
) -> tuple[bool, RepetitionOutcome | ExperimentStatus]:
    row = store.execution_outcome(arn)
    if row is None:
        status = execution_status(arn)
        if status is not None and status not in TERMINAL_EXECUTION_STATUSES:
            return False, RepetitionOutcome.STARTING
        row = store.execution_outcome(arn)  # it may have made its experiment and ended since the first look
        if row is None:
            return True, RepetitionOutcome.REJECTED
    return row.completed, row.status


def summarize(
    request: SweepSummaryRequest, store: Store, failed_executions: Callable[[str, str], set[str]]
) -> SweepSummary:
    """SummarizeSweep: how this run's repetitions stand, from the database (the maps keep no results):
    each by its latest experiment's status and, once it ended, its ending (success, agent failure, censored,
    error), a repetition without one rejected (its execution, found among ``failed_executions(state machine,
    name prefix)``, failed before making it) or skipped (never started: the spend limit, or the sweep was
    stopped)."""
    run = request.sweep
    attempts_of = sweep_plan.by_repetition(store.sweep_experiments(run.id))
    rejected = failed_executions(request.experimentStateMachineArn, f"{run.id}-")
    counts: Counter[str] = Counter()
    endings: Counter[Ending] = Counter()
    pauses: dict[str, str | None] = {}  # agent -> why it is paused (None: it is not)
    for index in chain.from_iterable(request.indices.values()):
        item = _item(run, store, index)
        attempts = attempts_of.get(item.agent_id(run.id), [])
        outcome = _outcome(run.id, item, attempts, rejected)
        if outcome != RepetitionOutcome.REJECTED and _unstarted(attempts):
            if item.cell.agent not in pauses:
                pauses[item.cell.agent] = paused(run, store, item.cell)
            if pauses[item.cell.agent] is not None:
                outcome = RepetitionOutcome.PAUSED
        counts[outcome] += 1
        if outcome != RepetitionOutcome.REJECTED and attempts and attempts[-1].ending is not None:
            endings[attempts[-1].ending] += 1
    return SweepSummary(
        sweep_id=run.id,
        planned=request.planned,
        already_done=request.alreadyDone,
        **{outcome: counts[outcome] for outcome in OUTCOMES},
        **{field: endings[ending] for ending, field in ENDING_FIELDS.items()},
        spent_usd=store.sweep_spend(run.id),
    )


def _unstarted(attempts: list[SweepExperiment]) -> bool:
    """Whether a repetition of the run is still to run, as a plain resume sees it: no run, no failure last, not
    running (a pause or the spend limit kept it from starting)."""
    return (not attempts or attempts[-1].status != ExperimentStatus.RUNNING) and sweep_plan.repetition(
        attempts, retry_failed=False
    ).ended is None


def _outcome(sweep_id: str, item: Planned, attempts: list[SweepExperiment], rejected: set[str]) -> str:
    """A repetition's outcome: its attempt of this run was rejected (its execution failed and made no experiment;
    one that made its experiment and failed with it, as an agent that stalls does, is that experiment's), else its
    latest experiment's status."""
    name = item.execution_name(sweep_id, sweep_plan.repetition(attempts, retry_failed=True).attempt)
    if name in rejected and not any(row.origin_execution_arn.rsplit(":", 1)[-1] == name for row in attempts):
        return RepetitionOutcome.REJECTED
    return attempts[-1].status if attempts else RepetitionOutcome.SKIPPED
