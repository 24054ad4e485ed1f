"""What a person writes to start an experiment (an execution input, a successor's, a replay's) and the
status-change event, validated at the boundary with clear messages: ``parse``, the one validation every input goes
through (the flow tasks' own inputs and outputs are ``oriole.lifecycle.task_io``'s; a sweep file's, with
``SweepFileError``)."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from oriole.catalog import MAX_PRICE_PER_MTOK
from oriole.errors import InvalidExecutionInput, OrioleError
from oriole.labels import label_problem
from oriole.provider_registry import DEFAULT_PROVIDER, ProviderName
from oriole.text import bounded, unstorable

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
    the list prices (``oriole.core.prices``): a sweep file's agent's, with where they come from."""

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
    archived: bool = Field(
        False,
        description="stored archived from its start, out of every view, report and export (a deployment check's "
        "experiment: it tests the system, not the model)",
    )
    modelBuild: Name | None = Field(
        None,
        max_length=400,
        description="the model build the experiment must run on (experiments.model_build, as `oriole rerun` asks): "
        "refused, naming both builds, when the server reports another or does not tell its build",
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


def parse(model: type[Model], data: object, what: str, error: type[OrioleError] = InvalidExecutionInput) -> Model:
    """Validate ``data`` as ``model``; any problem raises ``error`` (the flows' name for it) listing every field at
    fault, each with what it got."""
    if not isinstance(data, dict):
        raise error(f"{what} must be a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise error(f"invalid {what}: {_describe(err)}") from None
