"""Named errors. A handler's exception class name becomes the Step Functions error name,
so each name says what went wrong and the message says what to do about it."""

from oriole.text import bounded


class OrioleError(Exception):
    """Base of every error this project raises on purpose.

    The message is bounded (``oriole.text.MAX_MESSAGE_CHARS``): it travels as a Lambda error payload into the
    Step Functions state, whose 256 KB limit a quoted provider answer must never exceed, or the failure path
    would be skipped and the cause lost.
    """

    def __init__(self, message: str = ""):
        super().__init__(bounded(str(message)))


class InvalidExecutionInput(OrioleError):
    """The execution input is malformed: a missing or unknown field, a wrong type, an unknown provider."""


class UnknownMaze(InvalidExecutionInput):
    """A maze name or id that is not in the maze set (in an execution input, a sweep file, a CLI option)."""


class UnknownPromptVersion(InvalidExecutionInput):
    """No prompt is stored under /oriole/prompts/<version>."""


class InvalidConfig(InvalidExecutionInput):
    """A config override has an unknown key or a value of the wrong type or range."""


class ModelNotAllowed(InvalidExecutionInput):
    """A Bedrock model the deployment does not grant (its ``bedrockModelIds``)."""


class ContinuationRefused(InvalidExecutionInput):
    """An execution asked to carry an experiment on that its current execution did not hand over to: not its
    next part, or without the continuation token that execution's ContinueAsNew issued."""


class SweepFileError(OrioleError):
    """A sweep file (or the sweep state machine's input) cannot be read or describes an impossible matrix."""


class DatabaseNotConfigured(OrioleError):
    """Neither a database URL nor the deployment's database secret is set."""


class DatabaseBusy(OrioleError):
    """The database refused a new connection because it has no slot left (too many connections); the
    state machine retries the task with backoff."""


class ParameterStoreThrottled(OrioleError):
    """Parameter Store kept throttling StartExperiment's read after botocore's retries; the state machine
    retries the task with backoff."""


class StartExecutionThrottled(OrioleError):
    """Step Functions kept throttling the start of a successor execution; the state machine retries
    ContinueAsNew with backoff (the successor's fixed name makes a retried start idempotent)."""


class InvalidParameter(OrioleError):
    """A Parameter Store value cannot be parsed as the catalog declares it."""


class ExperimentNotFound(OrioleError):
    """A task was given an experiment id that is not in the database."""


class ExperimentNotRunning(OrioleError):
    """A task was asked to advance an experiment that is already completed."""


class TurnOutOfOrder(OrioleError):
    """A turn arrived that does not follow the experiment's last committed turn."""


class InvalidApiKey(OrioleError):
    """A provider's API key that cannot travel in an HTTP header (a control or non-Latin-1 character); the
    message names where the key came from and never quotes it."""


class ModelUnavailable(OrioleError):
    """The model endpoint could not be reached or kept failing (connection errors, 5xx) after bounded retries."""


class ModelTimeout(ModelUnavailable):
    """A model request took longer than the configured request timeout."""


class ModelThrottled(OrioleError):
    """The provider throttled the request; the state machine retries the task with backoff and jitter."""

    def __init__(self, message: str, throttles: int = 1):
        super().__init__(message)
        self.throttles = throttles


class ModelRequestRejected(OrioleError):
    """The provider refused the request for good (unknown model, invalid request, access denied)."""


class InvalidModelResponse(OrioleError):
    """The provider answered with something that is not a valid response (malformed JSON, missing fields)."""
