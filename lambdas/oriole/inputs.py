"""Task inputs as the state machine sends them, validated at the boundary with clear messages, and the base of
what tasks hand back (``TaskOutput``: snake_case in Python, the flow's camelCase names in the state)."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from oriole.catalog import MAX_PRICE_PER_MTOK
from oriole.errors import InvalidExecutionInput
from oriole.labels import label_problem
from oriole.provider_registry import DEFAULT_PROVIDER, ProviderName
from oriole.statuses import ExperimentStatus, NextStep, RepetitionOutcome
from oriole.text import JsonObject, bounded, unstorable

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)
_SHOWN_CHARS = 200  # how much of a refused value an error message quotes
MAX_MAZE_ID = 2**63 - 1
SWEEP_ID = r"^[A-Za-z0-9_-]{1,40}$"  # a sweep file's id


def _storable(value: str) -> str:
    """Free text (a comment): anything PostgreSQL can store."""
    problem = unstorable(value)
    if problem:
        raise ValueError(problem)
    return value


def _name(value: str) -> str:
    """A name (a model, a maze, an agent id): storable, and no control characters, which no name needs and a
    terminal would obey."""
    _storable(value)
    control = next((ch for ch in value if not ch.isprintable() and ch != " "), None)
    if control is not None:
        raise ValueError(f"contains the control character U+{ord(control):04X}; names must be printable")
    return value


def _label(value: str) -> str:
    """A name shown as a row of a table (a model, an agent's label): one a reader tells from another
    (``oriole.labels``)."""
    _name(value)
    problem = label_problem(value)
    if problem:
        raise ValueError(problem)
    return value


Name = Annotated[str, AfterValidator(_name)]
Label = Annotated[str, AfterValidator(_label)]
Text = Annotated[str, AfterValidator(_storable)]


MazeId = Annotated[int, Field(ge=1, le=MAX_MAZE_ID)]  # mazes.id is a bigint
# a price as shown and stored: -0 is 0 (a price of -0 would read "$-0")
PricePerMTok = Annotated[
    float, Field(ge=0, le=MAX_PRICE_PER_MTOK, allow_inf_nan=False), AfterValidator(lambda price: price + 0.0)
]


class GivenPrices(BaseModel):
    """The prices an execution input charges its model at (USD per million tokens), ahead of Parameter Store and
    the list prices (``oriole.prices``): a sweep file's agent's, with where they come from."""

    model_config = _STRICT

    inputPerMTok: PricePerMTok
    outputPerMTok: PricePerMTok
    source: Name | None = Field(None, max_length=200)


class ExecutionInput(BaseModel):
    """What a researcher pastes into the console to start an experiment."""

    model_config = _STRICT

    mazeId: str | MazeId = Field(description="a maze name (perfect-11, perfect-11@42, an imported maze's) or id")
    llmProvider: ProviderName = Field(DEFAULT_PROVIDER, description="who plays: a model provider or baseline")
    modelName: Label = Field(
        min_length=1,
        max_length=200,
        description="the model, sent as given; for baseline: random, wall-follower, explorer, oracle",
    )
    promptVersion: str = Field(
        "v1", pattern=r"^[A-Za-z0-9._-]{1,64}$", description="the prompt stored under /oriole/prompts/<version>"
    )
    agentId: Name | None = Field(None, max_length=200, description="a label stored with the experiment")
    agentLabel: Label | None = Field(
        None, min_length=1, max_length=80, description="shown in reports instead of provider/model"
    )
    comment: Text | None = Field(
        None, max_length=2000, description="free text; its whitespace-separated words are the experiment's tags"
    )
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="overrides of catalog parameters by their config key, for this experiment only",
    )
    prices: GivenPrices | None = Field(
        None, description="the model's prices for this experiment (USD per million tokens)"
    )
    sweepId: str | None = Field(
        None, pattern=SWEEP_ID, description="the sweep that starts it (set by the sweep flow; the sweep must exist)"
    )

    @field_validator("mazeId")
    @classmethod
    def _maze_name(cls, value: str | int) -> str | int:
        if isinstance(value, str) and len(value) > 200:
            raise ValueError(f"a maze name has at most 200 characters, not {len(value)}")
        return _name(value) if isinstance(value, str) else value


class Continuation(BaseModel):
    """The input of a successor execution: the experiment it carries on, and the token its predecessor's
    ContinueAsNew issued. Any string is taken as a token (it is only ever hashed and compared), so a refused
    token is never quoted in an error."""

    model_config = _STRICT

    experimentId: int = Field(gt=0)
    continuationToken: str | None = None


class ReplayInput(BaseModel):
    """The input of a replay's execution: the experiment whose recorded answers it plays again."""

    model_config = _STRICT

    replayOf: int = Field(gt=0)


class ContinueRequest(BaseModel):
    """ContinueAsNew's input: the experiment, the part this execution carries, and its state machine."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    experimentId: int = Field(gt=0)
    part: int = Field(gt=0)
    stateMachineArn: str = Field(min_length=1)


class TurnRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    experimentId: int = Field(gt=0)
    turnNumber: int = Field(gt=0)


class ProgressRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    experimentId: int = Field(gt=0)
    turnInExecution: int = Field(gt=0)
    executionStartTime: str | None = None  # the context object's $$.Execution.StartTime (ISO 8601)


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


class ExecutionStatusChange(BaseModel):
    """The detail of Step Functions' "Execution Status Change" event (EventBridge on AWS; the local runner
    and ``oriole doctor`` build the same detail from DescribeExecution)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    executionArn: str
    status: str
    name: str = ""
    input: str | None = None
    output: str | None = None
    error: str | None = None
    cause: str | None = None


_TASK = ConfigDict(extra="ignore", strict=True, frozen=True)


class RepetitionRequest(BaseModel):
    """A sweep map item, as its ItemSelector builds it: the sweep and the index of one planned experiment."""

    model_config = _TASK

    sweep: dict[str, Any]
    index: int = Field(ge=0)
    experimentStateMachineArn: str


class RepetitionCheck(BaseModel):
    """A sweep item's look at the experiment it started: the sweep's wait and how long the item has followed it
    (the sum of its waits), from which the next wait grows."""

    model_config = _TASK

    executionArn: str
    waitSeconds: int = Field(ge=1)
    followedSeconds: int = Field(ge=0)


class SweepSummaryRequest(BaseModel):
    """The sweep's last task: the run's plan (the indices each provider's map ran)."""

    model_config = _TASK

    sweep: dict[str, Any]
    planned: int = Field(ge=0)
    alreadyDone: int = Field(ge=0)
    indices: dict[str, list[int]]
    experimentStateMachineArn: str


class TaskOutput(BaseModel):
    """What a task returns to the state machine: fields in snake_case, written into the state under their camelCase
    names (``as_state``), which the flows' paths and ResultSelectors read."""

    model_config = ConfigDict(frozen=True, alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)

    def as_state(self) -> JsonObject:
        """The task's JSON result, as its Lambda returns it."""
        return self.model_dump(mode="json", by_alias=True)


class ProgressDecision(TaskOutput):
    """CheckProgress's answer: what the flow's ConditionCheck routes on (``decision``), and why."""

    decision: NextStep
    reason: str | None
    actions: int
    goal_found: bool


class Finalized(TaskOutput):
    """A finalizer's answer: the experiment (None: a rejected input had none), the status it asked for, whether
    this call closed it, and the reason it stored."""

    experiment_id: int | None
    status: ExperimentStatus
    closed: bool
    failure_reason: str | None


class Continued(TaskOutput):
    """ContinueAsNew's answer: the successor execution and the part it runs."""

    successor_execution_arn: str
    part: int


class RepetitionStarted(TaskOutput):
    """StartRepetition's answer: ``started`` and its execution, or why nothing started (the status its
    repetition already ended with, or ``skipped`` at the spend limit)."""

    outcome: RepetitionOutcome | ExperimentStatus
    execution_arn: str | None


def _describe(err: ValidationError) -> str:
    problems = []
    for item in err.errors():
        where = ".".join(str(part) for part in item["loc"]) or "input"
        if item["type"] == "extra_forbidden":
            problems.append(f"{where}: unknown field")
        else:
            shown = bounded(repr(item["input"]), _SHOWN_CHARS) if "input" in item else ""
            problems.append(
                f"{where}: {item['msg']}" + (f" (got {shown})" if shown and item["type"] != "missing" else "")
            )
    return "; ".join(problems)


Model = TypeVar("Model", bound=BaseModel)


def parse(model: type[Model], data: object, what: str) -> Model:
    """Validate ``data`` as ``model``; any problem raises InvalidExecutionInput listing every field at fault."""
    if not isinstance(data, dict):
        raise InvalidExecutionInput(f"{what} must be a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise InvalidExecutionInput(f"invalid {what}: {_describe(err)}") from None
