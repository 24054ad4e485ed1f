"""CheckProgress: decide after each turn whether to finish, continue, or continue as a new execution."""

from aws_lambda_powertools import Logger

from oriole import experiments
from oriole.store import shared_store

logger = Logger(service="oriole")


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    return experiments.check_progress(event, shared_store())
