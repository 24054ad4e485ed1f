"""CheckProgress: decide after each turn whether to finish, continue, or continue as a new execution."""


from oriole.handlers.observability import logger
from oriole.lifecycle import experiments
from oriole.store import shared_store


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    return experiments.check_progress(event, shared_store())
