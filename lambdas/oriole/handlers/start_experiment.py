"""StartExperiment: validate the execution input, snapshot the configuration, create the experiment."""

from aws_lambda_powertools.utilities import parameters

from oriole import catalog, experiments
from oriole.handlers.observability import count, logger, metrics
from oriole.store import shared_store


def read_parameters() -> dict[str, str]:
    """Every parameter under the catalog prefix, fresh (a snapshot must not come from a stale cache)."""
    values = parameters.get_parameters(catalog.PREFIX, recursive=True, force_fetch=True)
    return {f"{catalog.PREFIX}/{name.lstrip('/')}": value for name, value in values.items()}


@logger.inject_lambda_context
@metrics.log_metrics
def handler(event: dict, context) -> dict:
    state = experiments.start(event, shared_store(), read_parameters)
    logger.info("experiment started", extra={"experiment_id": state["experimentId"], "part": state["part"]})
    if state["part"] == 1:
        count("ExperimentsStarted")
    return state
