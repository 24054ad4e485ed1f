"""StartExperiment: validate the execution input, snapshot the configuration, create the experiment.

Parameter Store is read by name (GetParameters, ten names a call): the catalog, the chosen prompt and the
model's price, never every prompt version under the tree. A throttled read is retried by botocore with
backoff; one still throttled after that is ``ParameterStoreThrottled``, which the state machine retries.
"""

from collections.abc import Sequence

from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError

from oriole.errors import OrioleError, ParameterStoreThrottled
from oriole.experiment_config import ExperimentConfig
from oriole.handlers import agents, aws
from oriole.handlers.observability import count, logger, metrics
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import ExperimentStarted, StartRequest, task
from oriole.providers.contract import load_adapter
from oriole.providers.identity import ModelIdentity
from oriole.store import shared_store
from oriole.text import stored_message

GET_PARAMETERS_LIMIT = 10  # names per GetParameters call


def read_parameters(names: Sequence[str]) -> dict[str, str]:
    """The values of ``names`` that exist, fresh (a snapshot must not come from a stale cache)."""
    values: dict[str, str] = {}
    for first in range(0, len(names), GET_PARAMETERS_LIMIT):
        try:
            answer = aws.ssm().get_parameters(Names=list(names[first : first + GET_PARAMETERS_LIMIT]))
        except ClientError as err:
            if aws.throttled(err):
                raise ParameterStoreThrottled(f"Parameter Store throttled StartExperiment's read: {err}") from err
            raise
        values.update({p["Name"]: p["Value"] for p in answer["Parameters"]})
    return values


def identify(provider: str, model: str, config: ExperimentConfig) -> ModelIdentity | None:
    """What the model's server reports about the build it serves, asked with the provider's API key (the agent
    task's: ``oriole.handlers.agents.api_key``); a key that cannot be read is recorded as the reason the identity
    is unknown, never a failed start."""
    try:
        key = agents.api_key(provider)
    except (OrioleError, ClientError, GetParameterError) as err:
        return ModelIdentity(unknown={"api key": stored_message(f"{type(err).__name__}: {err}")})
    return load_adapter(provider).model_identity(config, model, key)


@logger.inject_lambda_context
@metrics.log_metrics
@task(StartRequest, ExperimentStarted, "StartExperiment input")
def handler(request: StartRequest, context: LambdaContext) -> ExperimentStarted:
    started = experiments.start(request, shared_store(context), read_parameters, identify)
    logger.info("experiment started", extra={"experiment_id": started.experiment_id, "part": started.part})
    if started.part == 1:
        count("ExperimentsStarted")
    return started
