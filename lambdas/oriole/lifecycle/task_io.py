"""Every flow task's input and output, one model each, and the one decorator that parses a task's event.

A task's handler is written in the Powertools style (as its Parser's ``event_parser``): ``@task(Request, Result,
what)`` hands the handler its event parsed as ``Request`` and returns its ``Result`` as the state's JSON. An event
that does not parse is the flows' named error (``InvalidExecutionInput``, a sweep's ``SweepFileError``) listing
every field at fault (``oriole.inputs.parse``, the one validation). Powertools' own ``event_parser`` raises
pydantic's ``ValidationError``, a name the flows cannot route on, hence this decorator over the same idea.

Requests carry the flows' own field names (``experimentId``); results are written in snake_case and read by the
flows under their camelCase names (``TaskOutput.as_state``). ``TASKS`` records each decorated handler's models:
``tests/unit/test_task_io.py`` ties each flow file's ``Parameters`` and ``ResultSelector`` to them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from oriole.core.sweep_plan import SweepRun, check_input_size
from oriole.errors import InvalidExecutionInput, OrioleError
from oriole.inputs import parse
from oriole.statuses import ExperimentStatus, NextStep, RepetitionOutcome, TurnEnd
from oriole.text import JsonObject

if TYPE_CHECKING:  # a handler's context, named in types only: the workstation imports this module without Powertools
    from aws_lambda_powertools.utilities.typing import LambdaContext

_REQUEST = ConfigDict(extra="ignore", strict=True, frozen=True)


# --- what the tasks are given ---------------------------------------------------------------------------------


class StartRequest(BaseModel):
    """StartExperiment's input: the execution's input (a new experiment's, a successor's or a replay's, told apart
    by ``experiments.start``) and the execution's ARN from the context object."""

    model_config = _REQUEST

    input: Any = None
    executionArn: str = Field(min_length=1)


class TurnRequest(BaseModel):
    """An agent task's input: the experiment and the turn to play."""

    model_config = _REQUEST

    experimentId: int = Field(gt=0)
    turnNumber: int = Field(gt=0)


class ProgressRequest(BaseModel):
    """CheckProgress's input: the experiment, the just-played turn's number within this execution, and when the
    execution started."""

    model_config = _REQUEST

    experimentId: int = Field(gt=0)
    turnInExecution: int = Field(gt=0)
    executionStartTime: str | None = None  # the context object's $$.Execution.StartTime (ISO 8601)


class ContinueRequest(BaseModel):
    """ContinueAsNew's input: the experiment, the part this execution carries, and its state machine."""

    model_config = _REQUEST

    experimentId: int = Field(gt=0)
    part: int = Field(gt=0)
    stateMachineArn: str = Field(min_length=1)


class CaughtError(BaseModel):
    """What a Catch puts under ``$.error``: the error's name and its cause (a Lambda error payload as JSON)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    Error: str | None = None
    Cause: str | None = None


class FinalizeRequest(BaseModel):
    """A finalizer's input: the whole state on the failure path, so every field is optional and lenient.

    A failed StartExperiment passes the execution input under ``input`` and the execution's ARN: a
    successor's input names its experiment, a rejected new input has none.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    experimentId: int | None = Field(None, strict=True)
    reason: str | None = None
    error: CaughtError = Field(default_factory=CaughtError)
    input: Any = None
    executionArn: str | None = None

    @property
    def experiment_id(self) -> int | None:
        if self.experimentId is not None:
            return self.experimentId
        hint = self.input.get("experimentId") if isinstance(self.input, dict) else None
        return hint if type(hint) is int else None


class SweepRequest(SweepRun):
    """PlanSweep's input: the sweep run as the execution was started with it, checked for size before anything
    else reads it (``sweep_plan.check_input_size``)."""

    @model_validator(mode="before")
    @classmethod
    def _not_too_large(cls, data: Any) -> Any:
        check_input_size(data)
        return data


class RepetitionRequest(BaseModel):
    """A sweep map item, as its ItemSelector builds it: the sweep and the index of one planned experiment."""

    model_config = _REQUEST

    sweep: SweepRun
    index: int = Field(ge=0)
    experimentStateMachineArn: str


class RepetitionCheck(BaseModel):
    """A sweep item's look at the experiment it started: the sweep's wait and how long the item has followed it
    (the sum of its waits), from which the next wait grows."""

    model_config = _REQUEST

    executionArn: str
    waitSeconds: int = Field(ge=1)
    followedSeconds: int = Field(ge=0)


class SweepSummaryRequest(BaseModel):
    """The sweep's last task: the run's plan (the indices each provider's map ran)."""

    model_config = _REQUEST

    sweep: SweepRun
    planned: int = Field(ge=0)
    alreadyDone: int = Field(ge=0)
    indices: dict[str, list[int]]
    experimentStateMachineArn: str


# --- what they hand back --------------------------------------------------------------------------------------


class TaskOutput(BaseModel):
    """What a task returns to the state machine: fields in snake_case, written into the state under their camelCase
    names (``as_state``), which the flows' paths and ResultSelectors read."""

    model_config = ConfigDict(frozen=True, alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)

    def as_state(self) -> JsonObject:
        """The task's JSON result, as its Lambda returns it."""
        return self.model_dump(mode="json", by_alias=True)


class ExperimentStarted(TaskOutput):
    """StartExperiment's answer, the small state the execution carries between tasks: ids and counters, never
    actions or messages."""

    experiment_id: int
    llm_provider: str
    turn_number: int
    turn_in_execution: int
    part: int


class TurnResult(TaskOutput):
    """What an agent task hands back to the state machine: small, never the conversation."""

    turn_number: int
    actions: int
    end_reason: TurnEnd
    goal_found: bool
    position: tuple[int, int]
    input_tokens: int
    output_tokens: int


class ProgressDecision(TaskOutput):
    """CheckProgress's answer: what the flow's ConditionCheck routes on (``decision``), and why."""

    decision: NextStep
    reason: str | None
    actions: int
    goal_found: bool


class Continued(TaskOutput):
    """ContinueAsNew's answer: the successor execution and the part it runs."""

    successor_execution_arn: str
    part: int


class Finalized(TaskOutput):
    """A finalizer's answer: the experiment (None: a rejected input had none), the status it asked for, whether
    this call closed it, and the reason it stored."""

    experiment_id: int | None
    status: ExperimentStatus
    closed: bool
    failure_reason: str | None


class SweepPlanned(TaskOutput):
    """PlanSweep's answer: the sweep as validated (its defaults filled in), how many experiments it plans and how
    many are done already, per provider the plan indices left to run and its concurrency cap, and the first wait
    between two looks at an experiment."""

    sweep: JsonObject
    planned: int
    already_done: int
    indices: dict[str, list[int]]
    caps: dict[str, int]
    wait_seconds: int


class RepetitionStarted(TaskOutput):
    """StartRepetition's answer: ``started`` and its execution, or why nothing started (the status its
    repetition already ended with, or ``skipped`` at the spend limit)."""

    outcome: RepetitionOutcome | ExperimentStatus
    execution_arn: str | None


class RepetitionChecked(TaskOutput):
    """CheckRepetition's answer: whether the experiment is closed and how it stands, the wait before the next look
    and how long the item will then have followed it."""

    closed: bool
    outcome: RepetitionOutcome | ExperimentStatus
    wait_seconds: int
    followed_seconds: int


class SweepSummary(TaskOutput):
    """SummarizeSweep's answer: how this run's repetitions stand (each by its latest experiment), how those that
    ended ended (``oriole.core.endings``) and what the sweep has spent."""

    sweep_id: str
    planned: int
    already_done: int
    succeeded: int
    timed_out: int
    failed: int
    aborted: int
    running: int
    rejected: int
    skipped: int
    paused: int
    successes: int
    agent_failures: int
    censored: int
    errors: int
    spent_usd: float


# --- the decorator ----------------------------------------------------------------------------------------------

Request = TypeVar("Request", bound=BaseModel)
Result = TypeVar("Result", bound=TaskOutput)
Handler = Callable[[JsonObject, "LambdaContext"], JsonObject]
TASKS: dict[str, tuple[type[BaseModel], type[TaskOutput]]] = {}  # handler "module.name" -> its request and result


def task(
    request: type[Request], result: type[Result], what: str, error: type[OrioleError] = InvalidExecutionInput
) -> Callable[[Callable[[Request, LambdaContext], Result]], Handler]:
    """A flow task's handler: given its event parsed as ``request`` (``what`` names the event in a refusal, raised
    as ``error``), returning a ``result``, written into the state as JSON."""

    def decorate(handler: Callable[[Request, LambdaContext], Result]) -> Handler:
        @functools.wraps(handler)
        def parsed(event: JsonObject, context: LambdaContext) -> JsonObject:
            answer = handler(parse(request, event, what, error), context)
            if not isinstance(answer, result):
                raise TypeError(f"{handler.__qualname__} returned {type(answer).__name__}, not {result.__name__}")
            return answer.as_state()

        TASKS[f"{handler.__module__}.{handler.__qualname__}"] = (request, result)
        return parsed

    return decorate
